"""Zotero's committed state, read from a private snapshot of its database.

Zotero writes ``zotero.sqlite`` while it runs. Read in place (even read-only and ``immutable``), a
write in progress is read as if committed: pages of a transaction Zotero has not committed sit in
the file (SQLite spills them there once its cache is full; the rollback journal beside it holds the
originals), and in WAL mode committed changes sit only in ``zotero.sqlite-wal``. So the database is
copied with its ``-journal`` or ``-wal`` into the project's data folder and opened there: SQLite's
own recovery rolls the copy back to its last commit (a hot journal) or applies the committed WAL
frames, on the copy only. The original is only ever read.

The copies are taken journal and WAL first, then the database, and taken again when any of them
changed meanwhile; while Zotero keeps writing, the reader says so and asks to try again.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

from insight_assets.core.library.model import LibraryError

SIDE_FILES = ("-wal", "-journal")
_ATTEMPTS = 4
_WAIT_S = 0.25
_DAMAGED = (
    "{path} is damaged: SQLite cannot read it, and no write is in progress. Close Zotero and restore "
    "it from Zotero's own backup (zotero.sqlite.bak in the same folder), then try again."
)
_WRITING = (
    "Zotero is writing to its database ({path}) right now: try again in a moment (or once Zotero "
    "has finished syncing or importing)."
)


def watched_paths(database: Path) -> list[Path]:
    """The files whose changes are the library's: the database, its WAL and its rollback journal."""
    return [database] + [database.with_name(database.name + suffix) for suffix in SIDE_FILES]


def file_state(paths: list[Path]) -> tuple:
    """Size and modification time of each path (None for one that does not exist)."""
    state = []
    for path in paths:
        try:
            stat = path.stat()
            state.append((stat.st_size, stat.st_mtime_ns))
        except FileNotFoundError:
            state.append(None)
    return tuple(state)


def open_snapshot(database: Path, folder: Path) -> sqlite3.Connection:
    """A connection to a private copy of ``database`` in ``folder``, at Zotero's last commit."""
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / database.name
    states = set()
    for attempt in range(_ATTEMPTS):
        if attempt:
            time.sleep(_WAIT_S)
        before = file_state(watched_paths(database))
        states.add(before)
        for stale in watched_paths(copy) + [copy.with_name(copy.name + "-shm")]:
            stale.unlink(missing_ok=True)
        # The side files first: a commit between the two copies leaves a journal that rolls the
        # newer database back to the state before it, which is a committed state too.
        for source, target in zip(watched_paths(database)[1:], watched_paths(copy)[1:], strict=True):
            _copy_if_there(source, target)
        _copy_if_there(database, copy)
        if file_state(watched_paths(database)) != before:
            continue
        connection = _recovered(copy)
        if connection is not None:
            return connection
    (state,) = states if len(states) == 1 else (None,)
    if state is not None and all(side is None for side in state[1:]):
        # Unchanged all along, no journal, no WAL: no write is in progress; the file itself is bad.
        raise LibraryError(_DAMAGED.format(path=database))
    raise LibraryError(_WRITING.format(path=database))


def _copy_if_there(source: Path, target: Path) -> None:
    try:
        shutil.copyfile(source, target)
    except FileNotFoundError:
        pass


def _recovered(copy: Path) -> sqlite3.Connection | None:
    """The copy opened (SQLite recovering it on the first read), or None when what was copied is
    not a consistent database (copied mid-write)."""
    connection = sqlite3.connect(copy)
    connection.row_factory = sqlite3.Row
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        connection.execute("PRAGMA query_only = 1")
    except sqlite3.DatabaseError:
        connection.close()
        return None
    return connection
