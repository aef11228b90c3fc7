"""The shared warehouse (DuckLake, its catalog in a real PostgreSQL) behind the Warehouse interface."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

import pyarrow as pa
import pytest

from insight_assets.core.storage import stores
from insight_assets.core.storage.lake import LakeWarehouse
from insight_assets.core.storage.stores import StoreError, Warehouse, warehouse_tables

pytestmark = pytest.mark.scale


def _columns(warehouse: Warehouse) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for row in warehouse.rows(
        """SELECT table_name, column_name, data_type FROM information_schema.columns
           WHERE table_catalog = current_database() AND table_schema = current_schema()
           ORDER BY table_name, ordinal_position"""
    ):
        found.setdefault(row["table_name"], []).append(f"{row['column_name']} {row['data_type']}")
    return found


def _chunk_runs(collection: str, keys: list[str]) -> pa.Table:
    return pa.table({"collection": [collection] * len(keys), "chunking_key": keys})


def test_the_shared_warehouse_has_the_embedded_ones_tables_and_replaces_one_collection_at_a_time(
    postgres_server, tmp_path
):
    embedded = Warehouse(tmp_path / "warehouse.duckdb")
    lake = LakeWarehouse(postgres_server.new_database(), tmp_path / "lake")
    assert _columns(lake) == _columns(embedded)
    assert set(warehouse_tables()) <= set(_columns(lake))

    lake.replace_partition("a", {"chunk_runs": _chunk_runs("a", ["k1", "k2"])})
    lake.replace_partition("b", {"chunk_runs": _chunk_runs("b", ["k3"])})
    lake.replace_partition("a", {"chunk_runs": _chunk_runs("a", ["k4"])})
    rows = lake.rows("SELECT collection, chunking_key FROM chunk_runs ORDER BY collection")
    assert rows == [{"collection": "a", "chunking_key": "k4"}, {"collection": "b", "chunking_key": "k3"}]
    lake.record_build("a", "chunks", rows=1, data_version="v", run_id="r")
    assert lake.unbuilt("a", ["chunks", "citations"]) == ["citations"]
    # Beyond a few rows (which DuckLake keeps in the catalog), the data are Parquet files under the
    # data path.
    lake.replace_partition("c", {"chunk_runs": _chunk_runs("c", [f"k{i}" for i in range(1000)])})
    assert list((tmp_path / "lake").rglob("*.parquet"))


def test_a_write_that_fails_leaves_the_collections_rows_as_they_were(postgres_server, tmp_path):
    lake = LakeWarehouse(postgres_server.new_database(), tmp_path / "lake")
    lake.replace_partition("a", {"chunk_runs": _chunk_runs("a", ["kept"])})
    with pytest.raises(StoreError, match="Unknown warehouse table"):
        lake.replace_partition(
            "a", {"chunk_runs": _chunk_runs("a", ["new"]), "no_such_table": _chunk_runs("a", [])}
        )
    # The second table's insert fails after the first table's rows were replaced: neither lands.
    wrong_columns = pa.table({"collection": ["a"], "no_such_column": [1]})
    with pytest.raises(Exception, match="no_such_column"):
        lake.replace_partition(
            "a", {"chunk_runs": _chunk_runs("a", ["new"]), "parse_problems": wrong_columns}
        )
    assert lake.rows("SELECT chunking_key FROM chunk_runs") == [{"chunking_key": "kept"}]


def test_a_write_that_loses_to_a_concurrent_one_is_replayed_and_both_land(postgres_server, tmp_path):
    """Two writers change the same table at the same moment: DuckLake refuses the second commit, and
    the warehouse replays that writer's transaction."""
    catalog = postgres_server.new_database()
    first, second = LakeWarehouse(catalog, tmp_path / "lake"), LakeWarehouse(catalog, tmp_path / "lake")
    # Rows of both collections exist: each writer's DELETE then removes some (deleting nothing
    # conflicts with nothing).
    first.replace_partition("a", {"chunk_runs": _chunk_runs("a", ["old"])})
    first.replace_partition("b", {"chunk_runs": _chunk_runs("b", ["old"])})
    both_wrote = threading.Barrier(2, timeout=30)
    attempts: list[str] = []

    def writer(warehouse: LakeWarehouse, collection: str) -> None:
        def work(connection) -> None:
            attempts.append(collection)
            connection.execute("DELETE FROM chunk_runs WHERE collection = ?", [collection])
            connection.execute("INSERT INTO chunk_runs VALUES (?, 'key')", [collection])
            if attempts.count(collection) == 1:
                both_wrote.wait()  # neither commits before both have written

        warehouse.write(work)

    threads = [threading.Thread(target=writer, args=pair) for pair in ((first, "a"), (second, "b"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(row["collection"] for row in first.rows("SELECT collection FROM chunk_runs")) == ["a", "b"]
    assert len(attempts) == 3  # one of the two was refused once and replayed


def _write_many(catalog: str, data_path: str, collection: str, start: multiprocessing.Barrier) -> None:
    warehouse = LakeWarehouse(catalog, data_path)
    warehouse.rows("SELECT 1")
    start.wait()
    for round_ in range(10):
        keys = [f"{collection}-{round_}-{i}" for i in range(50)]
        warehouse.replace_partition(collection, {"chunk_runs": _chunk_runs(collection, keys)})
        warehouse.record_build(collection, "chunks", rows=len(keys), data_version=str(round_), run_id=None)


def test_two_partitions_written_from_two_processes_at_the_same_moment_both_land(postgres_server, tmp_path):
    catalog, data_path = postgres_server.new_database(), str(tmp_path / "lake")
    LakeWarehouse(catalog, data_path).rows("SELECT 1")
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(2)
    writers = [context.Process(target=_write_many, args=(catalog, data_path, name, start)) for name in "ab"]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(120)
    assert [writer.exitcode for writer in writers] == [0, 0]
    lake = LakeWarehouse(catalog, data_path)
    counts = lake.rows(
        "SELECT collection, count(*) AS n FROM chunk_runs GROUP BY collection ORDER BY collection"
    )
    assert counts == [{"collection": "a", "n": 50}, {"collection": "b", "n": 50}]
    builds = lake.rows("SELECT collection, data_version FROM asset_builds ORDER BY collection")
    assert builds == [{"collection": "a", "data_version": "9"}, {"collection": "b", "data_version": "9"}]


def test_an_older_shared_warehouse_gains_new_columns_and_renamed_profiles_when_opened(
    postgres_server, tmp_path
):
    catalog = postgres_server.new_database()
    old = LakeWarehouse(catalog, tmp_path / "lake")

    def make_old(connection) -> None:
        connection.execute("ALTER TABLE chunk_runs DROP COLUMN chunking_key")
        connection.execute("INSERT INTO chunks (collection, profile, chunk_id) VALUES ('a', 'xsum', 'c1')")

    old.write(make_old)
    stores._SCHEMA_READY.clear()  # as a newer version's first process would find it
    opened = LakeWarehouse(catalog, tmp_path / "lake")
    assert "chunking_key VARCHAR" in _columns(opened)["chunk_runs"]
    assert opened.rows("SELECT profile FROM chunks") == [{"profile": "passage"}]


def test_an_unreachable_catalog_or_an_unwritable_data_path_is_one_sentence(postgres_server, tmp_path):
    from insight_assets_tests.servers import free_port

    closed = f"postgresql://someone:secret@127.0.0.1:{free_port()}/nowhere"
    with pytest.raises(StoreError, match="Cannot open the shared warehouse") as raised:
        LakeWarehouse(closed, tmp_path / "lake").rows("SELECT 1")
    assert "secret" not in str(raised.value) and "someone:***@" in str(raised.value)

    (tmp_path / "a-file").write_text("")
    with pytest.raises(StoreError, match="cannot write there"):
        LakeWarehouse(postgres_server.new_database(), Path(tmp_path / "a-file" / "lake")).rows("SELECT 1")


def _open_new(catalog: str, data_path: str, start: multiprocessing.Barrier) -> None:
    start.wait()
    LakeWarehouse(catalog, data_path).rows("SELECT count(*) FROM chunks")


def test_processes_opening_a_new_shared_warehouse_at_once_all_find_it_made(postgres_server, tmp_path):
    """Each would create the catalog; those that lose the race find the winner's."""
    catalog, data_path = postgres_server.new_database(), str(tmp_path / "lake")
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(4)
    openers = [context.Process(target=_open_new, args=(catalog, data_path, start)) for _ in range(4)]
    for opener in openers:
        opener.start()
    for opener in openers:
        opener.join(120)
    assert [opener.exitcode for opener in openers] == [0, 0, 0, 0]


def test_opening_an_unchanged_shared_warehouse_commits_nothing_and_a_changed_view_is_replaced(
    postgres_server, tmp_path
):
    """Every process opens the warehouse; in a lake each change to it is a catalog commit that
    concurrent writers would have to replay."""
    catalog = postgres_server.new_database()
    lake = LakeWarehouse(catalog, tmp_path / "lake")
    snapshots = "SELECT count(*) AS n FROM ducklake_snapshots('lake')"
    made = lake.rows(snapshots)[0]["n"]
    stores._SCHEMA_READY.clear()  # as the next process finds it
    assert LakeWarehouse(catalog, tmp_path / "lake").rows(snapshots)[0]["n"] == made

    lake.write(
        lambda connection: connection.execute("CREATE OR REPLACE VIEW co_citations AS SELECT 1 AS stale")
    )
    stores._SCHEMA_READY.clear()
    columns = [
        row["column_name"] for row in LakeWarehouse(catalog, tmp_path / "lake").rows("DESCRIBE co_citations")
    ]
    assert columns == ["collection", "doc_a", "doc_b", "co_cited_by"]
