"""Where a project's data is: its collections, the warehouse, LanceDB, the reports and trained
adapters. ``defs.resources.StorageResource`` configures the same for Dagster and reads its stores
through this; a process without Dagster (the MCP server) uses it directly."""

from __future__ import annotations

from dataclasses import dataclass

from insight_assets.core.deployment import Deployment, normalized_postgres_url
from insight_assets.core.storage.stores import VectorStore, Warehouse


@dataclass(frozen=True)
class Storage:
    """See ``StorageResource`` for what each path means; relative paths resolve against the working
    directory."""

    collections_root: str = "data/collections"
    warehouse_path: str = "data/warehouse.duckdb"
    warehouse_catalog: str | None = None
    warehouse_data_path: str | None = None
    lancedb_uri: str | None = None
    reports_dir: str = "data/reports"
    adapters_dir: str = "data/adapters"

    @property
    def warehouse(self) -> Warehouse:
        """The DuckDB file, or the deployment's DuckLake when a PostgreSQL catalog is configured."""
        deployment = Deployment.from_environment()
        catalog = self.warehouse_catalog or deployment.postgres_url
        if catalog:
            from insight_assets.core.storage.lake import LakeWarehouse

            return LakeWarehouse(
                normalized_postgres_url(catalog), self.warehouse_data_path or deployment.lake_data_path
            )
        return Warehouse(self.warehouse_path)

    @property
    def vectors_uri(self) -> str:
        """LanceDB's location: ``lancedb_uri``, else the deployment's."""
        return self.lancedb_uri or Deployment.from_environment().vectors_uri

    @property
    def vectors(self) -> VectorStore:
        return VectorStore(self.vectors_uri)
