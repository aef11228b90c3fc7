"""Opening the warehouse's DuckDB file when other processes may be opening it too.

DuckDB lets one process at a time open a file for writing: another waits its turn. Two steps that
start on a new warehouse at once (two collections built together) race to create it: the one that
loses finds a file shorter than DuckDB's headers, which DuckDB calls "not a valid DuckDB database
file", and waits until the winner has written them. A file that is no DuckDB file at all, or was
written by a newer DuckDB, is refused with what to do.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

from insight_assets.core.startup.lazy import duckdb

LOCK_WAIT_S = 120.0
# DuckDB writes a new file's three 4 KiB headers as it creates it: a shorter file is one another
# process is creating this moment, for a little while.
HEADER_BYTES = 3 * 4096
CREATING_WAIT_S = 10.0


class StoreError(RuntimeError):
    """A store could not be opened or written; the message names the file and what to do."""


def open_duckdb(path: Path) -> duckdb.DuckDBPyConnection:
    """``path`` opened (created if absent); waits, with jitter, while another process holds it or is
    creating it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    while True:
        before = _file_state(path)
        try:
            return duckdb.connect(str(path))
        except duckdb.IOException as error:
            message = str(error).lower()
            if "not a valid duckdb database file" in message:
                if _file_state(path) != before:  # written or replaced while DuckDB read it: read it again
                    continue
                if not _being_created(path, started):
                    raise StoreError(
                        f"The warehouse {path} is not a DuckDB file. Move it aside (mv {path} {path}.broken) "
                        "and build again: the vectors in LanceDB and the model answers in the cache are reused."
                    ) from None
            elif "newer version of duckdb" in message:
                raise StoreError(
                    f"The warehouse {path} was written by a newer DuckDB than this one "
                    f"({duckdb.__version__}, pinned for the shared warehouse's DuckLake extension), which "
                    f"cannot read it. Move it aside (mv {path} {path}.newer) and build again: "
                    "the vectors in LanceDB and the model answers in the cache are reused."
                ) from None
            elif "lock" not in message or time.monotonic() > started + LOCK_WAIT_S:
                raise StoreError(
                    f"Cannot open the warehouse {path}: {error}. "
                    "Another program (a notebook, a second `dagster dev`) may hold it open; close it and retry."
                ) from error
        time.sleep(0.05 + random.random() * 0.2)


def _file_state(path: Path) -> tuple[int, int, int] | None:
    """What tells one version of the file from another: its inode, size and modification time."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def _being_created(path: Path, started: float) -> bool:
    """Whether the file is still shorter than DuckDB's headers, not long after the first try."""
    try:
        short = path.stat().st_size < HEADER_BYTES
    except FileNotFoundError:
        short = True
    return short and time.monotonic() - started < CREATING_WAIT_S
