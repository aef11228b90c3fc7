"""A DuckDB file kept open between one process's queries, and let go for other processes.

DuckDB lets one process at a time open a file for writing, and opening one costs ~40 ms on this
project's 2-core machine (a database instance: its catalog of built-in functions, then the file's),
more than most of the warehouse's queries; a one-paper build ran 238 of them. So a process keeps
the file open while its queries come close together, lending each query a cursor of that one
connection, and lets it go

- when no query came for ``IDLE_S`` (a step waiting for a model, a run that ended), and
- after ``HOLD_S`` of holding it in one stretch, for ``STEP_ASIDE_S`` (a connection per query
  meanwhile, as before), so that another process waiting for the file gets its turn.

A process that forks gets no open file from its parent; a file deleted or replaced on disk (a test,
a user moving a warehouse aside) is opened again, never written through a stale handle.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from insight_assets.core.startup.lazy import duckdb

IDLE_S = 0.25
HOLD_S = 2.0
STEP_ASIDE_S = 0.5


class SharedFile:
    """One process's connection to one DuckDB file; ``cursor()`` lends it out."""

    def __init__(self, path: Path, open_file: Callable[[], duckdb.DuckDBPyConnection]):
        self.path = path
        self._open_file = open_file
        self._lock = threading.Lock()
        self._root: duckdb.DuckDBPyConnection | None = None
        self._identity: tuple[int, int] | None = None
        self._users = 0
        self._held_since = 0.0
        self._aside_until = 0.0
        self._release_timer: threading.Timer | None = None

    @contextlib.contextmanager
    def cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection to the file for one piece of work (a query, a transaction)."""
        root = self._lend()
        if root is None:
            connection = self._open_file()
            try:
                yield connection
            finally:
                connection.close()
            return
        try:
            cursor = root.cursor()
        except BaseException:
            self._give_back()
            raise
        try:
            yield cursor
        finally:
            cursor.close()
            self._give_back()

    def release(self) -> None:
        """Close the file now unless a query is using it."""
        with self._lock:
            if self._users == 0:
                self._close_root()

    def _lend(self) -> duckdb.DuckDBPyConnection | None:
        with self._lock:
            if self._release_timer is not None:
                self._release_timer.cancel()
                self._release_timer = None
            if self._root is not None and self._users == 0 and self._identity != _identity(self.path):
                self._close_root()
            if self._root is None:
                if time.monotonic() < self._aside_until:
                    return None
                self._root = self._open_file()
                self._identity = _identity(self.path)
                self._held_since = time.monotonic()
            self._users += 1
            return self._root

    def _give_back(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users or self._root is None:
                return
            now = time.monotonic()
            if now - self._held_since >= HOLD_S:
                self._close_root()
                self._aside_until = now + STEP_ASIDE_S
                return
            self._release_timer = threading.Timer(IDLE_S, self.release)
            self._release_timer.daemon = True
            self._release_timer.start()

    def _close_root(self) -> None:
        if self._root is not None:
            self._root.close()
            self._root = None


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        status = path.stat()
    except FileNotFoundError:
        return None
    return status.st_dev, status.st_ino


_files: dict[Path, SharedFile] = {}
_files_lock = threading.Lock()


def shared_file(path: Path, open_file: Callable[[], duckdb.DuckDBPyConnection]) -> SharedFile:
    """This process's ``SharedFile`` for ``path`` (made with ``open_file`` the first time)."""
    key = path.resolve()
    with _files_lock:
        if key not in _files:
            _files[key] = SharedFile(key, open_file)
        return _files[key]


def release_all() -> None:
    """Close every file no query is using (at exit: DuckDB checkpoints its log when closed)."""
    with _files_lock:
        files = list(_files.values())
    for file in files:
        file.release()


def _forget_after_fork() -> None:
    # The child must not use, nor close, the parent's open files: the parent still holds them.
    global _files_lock
    _files.clear()
    _files_lock = threading.Lock()


atexit.register(release_all)
os.register_at_fork(after_in_child=_forget_after_fork)
