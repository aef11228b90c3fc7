"""The Dagster storage resource and the plain ``core.storage.project.Storage`` (the MCP server's, without
Dagster) name the same paths with the same defaults, and the resource reads its stores through it."""

from __future__ import annotations

import dataclasses

from insight_assets.core.storage.project import Storage
from insight_assets.defs.resources import StorageResource


def test_the_resource_and_the_plain_storage_have_the_same_paths_and_defaults():
    plain = {field.name: field.default for field in dataclasses.fields(Storage)}
    resource = {name: field.default for name, field in StorageResource.model_fields.items()}
    assert plain == resource


def test_the_resource_reads_its_stores_where_its_paths_say(tmp_path):
    resource = StorageResource(
        warehouse_path=str(tmp_path / "w.duckdb"), lancedb_uri=str(tmp_path / "lancedb")
    )
    assert resource.storage() == Storage(
        warehouse_path=str(tmp_path / "w.duckdb"), lancedb_uri=str(tmp_path / "lancedb")
    )
    assert resource.warehouse.path == tmp_path / "w.duckdb"
    assert resource.vectors.uri == str(tmp_path / "lancedb") == resource.vectors_uri
