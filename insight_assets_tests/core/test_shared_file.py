"""One process keeps the warehouse file open between close queries, and lets other processes in."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import pyarrow as pa
import pytest

from insight_assets.core.runtime.forked import forked_map
from insight_assets.core.storage import shared_file
from insight_assets.core.storage.duckdb_file import StoreError
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


# A step of a hosted build: threads writing the warehouse while one forks workers, as the parser does.
# Each thread keeps its last four rounds of 50 rows; prints, as JSON, the failures and the last round
# each thread wrote.
STEP_THAT_FORKS = textwrap.dedent(
    """
    import json, random, sys, threading, time
    from insight_assets.core.runtime.forked import forked_map
    from insight_assets.core.storage.stores import Warehouse

    path, seconds, step = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    warehouse, stop = Warehouse(path), time.monotonic() + seconds
    failures, last = [], {}

    def write(writer):
        round_ = 0
        while time.monotonic() < stop:
            def rounds(connection, round_=round_):
                connection.execute("CREATE TABLE IF NOT EXISTS rounds (step TEXT, writer INT, round INT, pad TEXT)")
                connection.execute(
                    "INSERT INTO rounds SELECT ?, ?, ?, repeat('x', 2000) FROM range(50)", [step, writer, round_]
                )
                connection.execute(
                    "DELETE FROM rounds WHERE step = ? AND writer = ? AND round < ?", [step, writer, round_ - 3]
                )
            try:
                warehouse.write(rounds)
            except Exception as error:
                failures.append(repr(error)[:300])
                return
            last[writer] = round_
            round_ += 1
            time.sleep(random.random() * 0.02)  # a step between writes: its model's answers

    def fork():
        while time.monotonic() < stop:
            forked_map(lambda item: item, [1, 2], workers=2, crashed=lambda item, how: how)
            time.sleep(0.1)

    threads = [threading.Thread(target=write, args=(writer,)) for writer in range(8)]
    threads.append(threading.Thread(target=fork))
    [thread.start() for thread in threads]
    [thread.join() for thread in threads]
    print(json.dumps({"failures": failures, "last": last}))
    """
)


def test_steps_that_fork_workers_while_writing_leave_the_warehouse_whole(tmp_path):
    """Two steps side by side, each forking workers while its threads write: a worker's copy of its
    parent's open file, closed or opened in the worker, once corrupted the warehouse ("computed
    checksum does not match stored checksum", "Unique file handle conflict")."""
    path = tmp_path / "w.duckdb"
    steps = {
        step: subprocess.Popen(
            [sys.executable, "-c", STEP_THAT_FORKS, str(path), "8", step], stdout=subprocess.PIPE, text=True
        )
        for step in ("a", "b")
    }
    reports = {step: json.loads(process.communicate(timeout=120)[0]) for step, process in steps.items()}

    assert {step: report["failures"] for step, report in reports.items()} == {"a": [], "b": []}
    written = {
        (step, int(writer)): (last, 50 * min(4, last + 1))
        for step, report in reports.items()
        for writer, last in report["last"].items()
    }
    on_disk = Warehouse(path).rows(
        "SELECT step, writer, max(round) AS last, count(*) AS n FROM rounds GROUP BY ALL"
    )
    assert {(row["step"], row["writer"]): (row["last"], row["n"]) for row in on_disk} == written


def test_a_worker_forked_while_the_file_is_in_use_refuses_it(tmp_path, monkeypatch):
    """A fork that cannot wait for the file to be free leaves the child a copy it must not touch."""
    monkeypatch.setattr(shared_file, "FORK_WAIT_S", 0.1)
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.replace_partition("a", {"source_documents": sources("a", "1.pdf")})

    def count_in_worker(_item):
        return warehouse.rows("SELECT count(*) AS n FROM source_documents")

    with warehouse.connect(), pytest.raises(StoreError, match="forked"):  # held by the forking thread
        forked_map(count_in_worker, [1], workers=1, crashed=lambda item, how: how)
    assert warehouse.rows("SELECT count(*) AS n FROM source_documents") == [{"n": 1}]
