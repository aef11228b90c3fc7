"""One process keeps the warehouse file open between close queries, and lets other processes in."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pyarrow as pa

from insight_assets.core.storage import shared_file
from insight_assets.core.storage.stores import Warehouse

# Another process: opens the file itself (no waiting of ours), retrying for up to ``seconds``,
# writes one row, and says how many tries it took; exit status 1 when it never got in.
OTHER_PROCESS = textwrap.dedent(
    """
    import sys, time, duckdb
    path, seconds = sys.argv[1], float(sys.argv[2])
    deadline, tries = time.monotonic() + seconds, 0
    while True:
        tries += 1
        try:
            connection = duckdb.connect(path)
            break
        except duckdb.IOException:
            if time.monotonic() > deadline:
                sys.exit(1)
            time.sleep(0.02)
    connection.execute("INSERT INTO source_documents (collection, file) VALUES ('other', 'x.pdf')")
    connection.close()
    print(tries)
    """
)


def other_process(path, seconds: float) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", OTHER_PROCESS, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    )


def sources(collection: str, file: str) -> pa.Table:
    return pa.table({"collection": [collection], "file": [file]})


def default_order(warehouse: Warehouse) -> str:
    """A setting of the open database itself: a fresh opening of the file starts at ASCENDING."""
    return warehouse.rows("SELECT current_setting('default_order') AS value")[0]["value"]


def test_queries_in_a_row_share_one_opening_of_the_file_until_it_is_idle(tmp_path):
    warehouse = Warehouse(tmp_path / "w.duckdb")
    rows = sources("a", "1.pdf")
    warehouse.replace_partition("a", {"source_documents": rows})  # the first query's imports, done

    with warehouse.connect() as connection:
        connection.execute("SET GLOBAL default_order = 'DESC'")
    warehouse.replace_partition("a", {"source_documents": rows})
    assert default_order(warehouse) == "DESC"

    time.sleep(shared_file.IDLE_S * 4)
    assert default_order(warehouse) == "ASCENDING"


def test_an_idle_process_lets_another_process_write(tmp_path):
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.replace_partition("a", {"source_documents": sources("a", "1.pdf")})

    other = other_process(warehouse.path, seconds=30)
    assert other.wait(60) == 0, "the other process never got the file"

    rows = warehouse.rows("SELECT collection, file FROM source_documents ORDER BY collection")
    assert rows == [{"collection": "a", "file": "1.pdf"}, {"collection": "other", "file": "x.pdf"}]


def test_a_process_that_never_pauses_still_lets_another_process_in(tmp_path):
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.replace_partition("a", {"source_documents": sources("a", "1.pdf")})

    other = other_process(warehouse.path, seconds=shared_file.HOLD_S * 10)
    deadline = time.monotonic() + shared_file.HOLD_S * 20
    while other.poll() is None and time.monotonic() < deadline:
        warehouse.rows("SELECT count(*) FROM source_documents")  # back to back: never idle

    assert other.wait(5) == 0, "the other process never got the file"
    assert warehouse.rows("SELECT file FROM source_documents WHERE collection = 'other'") == [
        {"file": "x.pdf"}
    ]


def test_a_file_replaced_on_disk_is_opened_again(tmp_path):
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.replace_partition("a", {"source_documents": sources("a", "1.pdf")})
    warehouse.path.rename(tmp_path / "aside.duckdb")
    Warehouse(tmp_path / "fresh.duckdb").replace_partition("b", {"source_documents": sources("b", "2.pdf")})
    shared_file.release_all()
    (tmp_path / "fresh.duckdb").rename(warehouse.path)

    assert warehouse.rows("SELECT collection, file FROM source_documents") == [
        {"collection": "b", "file": "2.pdf"}
    ]
