"""Zotero read at its last commit: a write in progress (pages spilled into zotero.sqlite, the
rollback journal beside it) is never read, a commit that sits only in the WAL is, and counts as a
change; items in no collection are a collection of their own."""

from __future__ import annotations

import sqlite3

import pytest

from insight_assets.core.collection_sources import registry_for
from insight_assets.core.library import LibraryError
from insight_assets.core.library.zotero import read_zotero
from insight_assets_tests.conftest import DEMO_COLLECTION
from insight_assets_tests.zotero_library import DEMO_ITEMS, demo_library


@pytest.fixture
def zotero(tmp_path):
    library, _ = demo_library(tmp_path, DEMO_COLLECTION)
    yield library
    library.close()


def names(collections) -> list[str]:
    return sorted(collection.name for collection in collections)


def test_a_write_zotero_has_not_committed_is_not_read(zotero, tmp_path):
    database = tmp_path / "Zotero" / "zotero.sqlite"
    before = database.read_bytes()
    writer = sqlite3.connect(database, isolation_level=None)
    # As Zotero does with a big write: its cache fills and pages spill into the file before commit.
    writer.execute("PRAGMA locking_mode = EXCLUSIVE")
    writer.execute("PRAGMA cache_size = 2")
    writer.execute("BEGIN")
    writer.execute(
        "INSERT INTO collections (collectionName, libraryID, key) VALUES ('Never committed', 1, 'UNCOMMIT')"
    )
    writer.executemany(
        "INSERT INTO itemDataValues (value) VALUES (?)", [(f"filler {n} " + "x" * 400,) for n in range(3000)]
    )
    try:
        assert database.read_bytes() != before  # the uncommitted pages are in the file
        assert database.with_name("zotero.sqlite-journal").is_file()

        found = read_zotero(tmp_path / "Zotero", "mylib", snapshot_dir=tmp_path / "snapshot")
    finally:
        writer.execute("ROLLBACK")
        writer.close()

    assert names(found) == ["mylib-embeddings", "mylib-evaluation"]
    assert database.read_bytes() == before  # the original was only read


def test_a_commit_only_in_the_wal_is_read_and_is_a_change(zotero, tmp_path):
    zotero.db.execute("PRAGMA journal_mode = WAL")
    registry = registry_for(tmp_path / "data" / "collections")
    library = registry.add("zotero", tmp_path / "Zotero", "mylib")
    state = library.state()
    reader = sqlite3.connect(tmp_path / "Zotero" / "zotero.sqlite")  # keeps the WAL from being checkpointed

    item_id, _ = zotero.item([zotero.collection("Reading group")], title=DEMO_ITEMS["s2orc"][1])
    zotero.stored_pdf(item_id, DEMO_COLLECTION / DEMO_ITEMS["s2orc"][0])

    wal = tmp_path / "Zotero" / "zotero.sqlite-wal"
    assert wal.is_file() and wal.stat().st_size > 0
    assert library.state() != state
    assert "mylib-reading-group" in names(library.collections())
    reader.close()


def test_items_in_no_collection_are_a_collection_of_their_own(zotero, tmp_path):
    item_id, key = zotero.item([], title=DEMO_ITEMS["longeval"][1], authors=[("Kalpesh", "Krishna")])
    zotero.stored_pdf(item_id, DEMO_COLLECTION / DEMO_ITEMS["longeval"][0])

    found = {collection.name: collection for collection in read_zotero(tmp_path / "Zotero", "mylib")}

    unfiled = found["mylib-unfiled"]
    assert [item.key for item in unfiled.items] == [key]
    assert unfiled.items[0].authors == ("Krishna, Kalpesh",)


def test_a_damaged_database_is_told_apart_from_one_being_written(zotero, tmp_path):
    database = tmp_path / "Zotero" / "zotero.sqlite"
    data = database.read_bytes()
    # The header stays (it is an SQLite file), the pages after it are gone.
    database.write_bytes(data[:100] + b"\0" * (len(data) - 100))

    with pytest.raises(LibraryError, match="is damaged: .*zotero.sqlite.bak"):
        read_zotero(tmp_path / "Zotero", "mylib")

    database.write_bytes(b"this is not a database at all")
    with pytest.raises(LibraryError, match="is not an SQLite database"):
        read_zotero(tmp_path / "Zotero", "mylib")
