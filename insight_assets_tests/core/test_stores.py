"""The stores replace exactly one collection's rows."""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from insight_assets.core.storage.stores import VectorStore, Warehouse


def sources(collection: str, files: list[str]) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {"collection": collection, "file": f, "doc_id": f"id-{f}", "size_bytes": 1, "pages": 1}
            for f in files
        ]
    )


def test_replacing_a_partition_leaves_other_collections_alone(tmp_path):
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.replace_partition("a", {"source_documents": sources("a", ["1.pdf", "2.pdf"])})
    warehouse.replace_partition("b", {"source_documents": sources("b", ["3.pdf"])})
    warehouse.replace_partition("a", {"source_documents": sources("a", ["4.pdf"])})
    rows = warehouse.rows("SELECT collection, file FROM source_documents ORDER BY collection, file")
    assert rows == [{"collection": "a", "file": "4.pdf"}, {"collection": "b", "file": "3.pdf"}]


def test_a_failed_write_changes_nothing(tmp_path):
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.replace_partition("a", {"source_documents": sources("a", ["1.pdf"])})
    broken = pa.table({"collection": ["a"], "no_such_column": [1]})
    with pytest.raises(duckdb.Error, match="no_such_column"):
        warehouse.replace_partition("a", {"source_documents": sources("a", ["2.pdf"]), "chunks": broken})
    assert warehouse.rows("SELECT file FROM source_documents") == [{"file": "1.pdf"}]


def vectors(collection: str, profile: str, ids: list[str], variant: str = "v1") -> pa.Table:
    matrix = np.eye(4, dtype=np.float32)[: len(ids)]
    return pa.table(
        {
            "collection": [collection] * len(ids),
            "profile": [profile] * len(ids),
            "chunk_id": ids,
            "variant": [variant] * len(ids),
            "text": [f"chunk {chunk_id} about {profile}" for chunk_id in ids],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), 4),
        }
    )


def test_vector_tables_are_per_collection_and_text_search_filters(tmp_path):
    store = VectorStore(str(tmp_path / "lancedb"))
    store.replace("a", vectors("a", "passage", ["x1", "x2", "x3"]))
    store.replace("b", vectors("b", "passage", ["y1"]))
    store.replace(
        "a", pa.concat_tables([vectors("a", "passage", ["x1", "x2"]), vectors("a", "section", ["g1"], "v2")])
    )
    assert store.read("b", ["chunk_id"]).column("chunk_id").to_pylist() == ["y1"]
    assert sorted(store.read("a", ["chunk_id"]).column("chunk_id").to_pylist()) == ["g1", "x1", "x2"]
    assert store.read("nothing") is None

    assert not store.has_text_index("a")
    store.build_text_index("a")
    assert store.has_text_index("a") and not store.has_text_index("b")
    found = store.text_search("a", "x2", "profile = 'passage'", 5)
    assert [chunk_id for chunk_id, _ in found] == ["x2"] and found[0][1] > 0
    assert store.text_search("a", "x2", "profile = 'section'", 5) == []
    assert store.text_search("nothing", "x2", "true", 5) == []
    # Rewriting the table drops its index: the asset builds it again.
    store.replace("a", vectors("a", "passage", ["x1"]))
    assert not store.has_text_index("a")


def test_the_warehouse_has_the_tables_and_columns_users_rely_on(tmp_path):
    """Every method declares its own tables; together with the shared ones they are exactly the
    warehouse of before the methods moved into plug-ins (``data/warehouse_columns.json``): a table
    or column lost or renamed breaks users' queries and old warehouses."""
    import json
    from pathlib import Path

    import insight_assets.definitions  # noqa: F401  (every defs folder, so every method)

    warehouse = Warehouse(tmp_path / "w.duckdb")
    columns: dict[str, list[str]] = {}
    for row in warehouse.rows(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "ORDER BY table_name, ordinal_position"
    ):
        columns.setdefault(row["table_name"], []).append(f"{row['column_name']} {row['data_type']}")
    expected = json.loads((Path(__file__).parents[1] / "data" / "warehouse_columns.json").read_text())
    assert sorted(columns) == sorted(expected)
    assert columns == expected


def test_a_store_written_with_the_old_profile_names_is_renamed_when_opened(tmp_path):
    """Chunk profiles were named after methods ("insightgen", "xsum"); a warehouse and a vector
    table of that time read back with the new names ("section", "passage")."""
    path = tmp_path / "old.duckdb"
    with duckdb.connect(str(path)) as old:
        old.execute("CREATE TABLE chunks (collection VARCHAR, profile VARCHAR, chunk_id VARCHAR)")
        old.execute(
            "INSERT INTO chunks VALUES ('a', 'insightgen', 'c1'), ('a', 'xsum', 'c2'), ('a', 'other', 'c3')"
        )
    lancedb_uri = str(tmp_path / "lancedb")
    VectorStore(lancedb_uri).db.create_table(
        "chunk_embeddings__a",
        data=pa.table(
            {"profile": ["xsum", "insightgen"], "chunk_id": ["c2", "c1"], "pooled_from": ["", "xsum"]}
        ),
    )

    rows = Warehouse(path).rows("SELECT chunk_id, profile FROM chunks ORDER BY chunk_id")
    vectors = VectorStore(lancedb_uri).read("a").to_pylist()

    assert rows == [
        {"chunk_id": "c1", "profile": "section"},
        {"chunk_id": "c2", "profile": "passage"},
        {"chunk_id": "c3", "profile": "other"},
    ]
    assert sorted((row["chunk_id"], row["profile"], row["pooled_from"]) for row in vectors) == [
        ("c1", "section", "passage"),
        ("c2", "passage", ""),
    ]


def test_a_relative_warehouse_path_keeps_naming_its_file_after_the_working_directory_changes(
    tmp_path, monkeypatch
):
    from insight_assets.core.storage.shared_file import release_all

    (tmp_path / "project").mkdir()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    Warehouse("data/warehouse.duckdb").replace_partition(
        "a", {"chunk_runs": pa.table({"collection": ["a"], "chunking_key": ["k"]})}
    )
    monkeypatch.chdir(tmp_path / "elsewhere")
    release_all()  # closed while idle, as after 0.25 s: opened again at the next query
    assert Warehouse(tmp_path / "project" / "data" / "warehouse.duckdb").rows("SELECT * FROM chunk_runs") == [
        {"collection": "a", "chunking_key": "k"}
    ]
    assert not (tmp_path / "elsewhere" / "data").exists()
