"""The warehouse file opened while another process creates it, and refused when it is no DuckDB file."""

from __future__ import annotations

import os
import threading

import duckdb
import pytest

from insight_assets.core.storage import duckdb_file
from insight_assets.core.storage.duckdb_file import StoreError, open_duckdb


def test_a_file_another_process_is_creating_is_opened_once_it_is_written(tmp_path):
    path = tmp_path / "warehouse.duckdb"
    path.write_bytes(b"\0" * 100)  # what the creating process has written so far: less than the headers

    def finish_creating() -> None:
        written = tmp_path / "written.duckdb"
        duckdb.connect(str(written)).execute(
            "CREATE TABLE made_by AS SELECT 'the other process' AS who"
        ).close()
        os.replace(written, path)

    other = threading.Timer(0.3, finish_creating)
    other.start()
    try:
        connection = open_duckdb(path)
    finally:
        other.join()
    assert connection.execute("SELECT who FROM made_by").fetchall() == [("the other process",)]
    connection.close()


def test_a_file_nobody_finishes_creating_is_refused_with_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setattr(duckdb_file, "CREATING_WAIT_S", 0.3)
    path = tmp_path / "warehouse.duckdb"
    path.write_bytes(b"")  # left behind by a process that died creating it
    with pytest.raises(StoreError, match=r"is not a DuckDB file\. Move it aside \(mv .*warehouse\.duckdb "):
        open_duckdb(path)


def test_a_file_that_is_not_a_duckdb_file_is_refused(tmp_path):
    path = tmp_path / "warehouse.duckdb"
    path.write_text("a spreadsheet saved under the wrong name\n" * 1000)
    with pytest.raises(StoreError, match="is not a DuckDB file"):
        open_duckdb(path)
