"""The four ingestion assets materialized in-process, as a run would, on temporary stores.

Used by the ``rerun`` and ``ingest_all`` benchmarks: collections are symlinked from the corpus into a
temporary collections root, so nothing is copied and nothing under data/ is touched.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from insight_assets.defs import runs
from insight_assets.defs.resources import EmbedderResource, StorageResource

ASSET_NAMES = [asset.key.to_user_string() for asset in runs.INGESTION_ASSETS]
# Dagster's console logger prints every event at DEBUG; a benchmark wants only its own table.
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def temp_storage(root: Path) -> StorageResource:
    """Collections, warehouse and LanceDB all under ``root``."""
    (root / "collections").mkdir(parents=True, exist_ok=True)
    return StorageResource(
        collections_root=str(root / "collections"),
        warehouse_path=str(root / "warehouse.duckdb"),
        lancedb_uri=str(root / "lancedb"),
    )


def link_collection(storage: StorageResource, name: str, files: list[Path]) -> None:
    """A collection folder ``name`` holding symlinks to ``files``."""
    folder = Path(storage.collections_root) / name
    folder.mkdir()
    for path in files:
        (folder / path.name).symlink_to(path.resolve())


def materialize(
    instance: dg.DagsterInstance, storage: StorageResource, embedder: EmbedderResource, collection: str
) -> dg.ExecuteInProcessResult:
    """Run the four ingestion assets for one collection, quietly."""
    return runs.materialize_collection(instance, storage, embedder, collection, run_config=QUIET)


def metadata(result: dg.ExecuteInProcessResult) -> dict[str, dict]:
    """The numeric metadata of each asset's materialization, and of each check under its name."""
    events = [(n, m.metadata) for n in ASSET_NAMES for m in result.asset_materializations_for_node(n)]
    events += [(check.check_name, check.metadata) for check in result.get_asset_check_evaluations()]
    return {
        name: {key: value.value for key, value in values.items() if isinstance(value.value, int | float)}
        for name, values in events
    }
