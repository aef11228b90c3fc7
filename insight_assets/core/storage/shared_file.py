"""A DuckDB file kept open between one process's queries, and let go for other processes.

DuckDB lets one process at a time open a file for writing, and opening one costs ~40 ms on this
project's 2-core machine (a database instance: its catalog of built-in functions, then the file's),
more than most of the warehouse's queries; a one-paper build ran 238 of them. So a process keeps
the file open while its queries come close together, lending each query a cursor of that one
connection, and lets it go

- when no query came for ``IDLE_S`` (a step waiting for a model, a run that ended), and
- after ``HOLD_S`` of holding it in one stretch, for ``STEP_ASIDE_S`` (a connection per query
  meanwhile), so that another process waiting for the file may get its turn. It is not assured:
  while this process's queries keep coming, each of those connections takes the file's lock again.

A file deleted or replaced on disk (a test, a user moving a warehouse aside) is opened again, never
written through a stale handle.

One process has at most one DuckDB instance of a file at a time. DuckDB's lock on the file is the
process's (an fcntl lock): a second instance in the same process is not kept out by it, and the
first one closing drops the lock under the second. So connections are opened and closed one at a
time (an instance closing is checkpointing the file), and the connections of a step-aside share
one instance.

Forks (the parser's workers) get no open file: before a fork every file is closed once no query is
using it. A child's copy of a parent's open instance must be neither closed (closing it checkpoints
the parent's file and deletes the parent's log) nor opened again (DuckDB hands the copy out for the
same path), so a child refuses a file its parent still had open. Without these rules, steps that
forked while writing side by side corrupted the warehouse ("computed checksum does not match
stored checksum") or starved each other (``test_shared_file``).
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

from insight_assets.core.storage.duckdb_file import StoreError

if TYPE_CHECKING:
    from insight_assets.core.startup.lazy import duckdb

IDLE_S = 0.25
HOLD_S = 2.0
STEP_ASIDE_S = 0.5
# How long a fork waits for the queries of other threads to end, so that it inherits no open file.
FORK_WAIT_S = 10.0


class SharedFile:
    """One process's connection to one DuckDB file; ``cursor()`` lends it out."""

    def __init__(self, path: Path, open_file: Callable[[], duckdb.DuckDBPyConnection]):
        self.path = path
        self._open_file = open_file
        self._lock = threading.Condition()
        # Held while a connection is opened or closed: one instance of the file at a time.
        self._opening = threading.Lock()
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
            try:
                connection = self._connect()
            except BaseException:
                self._give_back()
                raise
            try:
                yield connection
            finally:
                with self._opening:
                    connection.close()
                self._give_back()
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
            self._users += 1  # a connection of its own, during a step-aside, counts too
            if self._root is None:
                if time.monotonic() < self._aside_until:
                    return None
                try:
                    self._root = self._connect()
                except BaseException:
                    self._users -= 1
                    raise
                self._identity = _identity(self.path)
                self._held_since = time.monotonic()
            return self._root

    def _give_back(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users:
                return
            self._lock.notify_all()  # a fork waiting for the file to be free
            if self._root is None:
                return
            now = time.monotonic()
            if now - self._held_since >= HOLD_S:
                self._close_root()
                self._aside_until = now + STEP_ASIDE_S
                return
            self._release_timer = threading.Timer(IDLE_S, self.release)
            self._release_timer.daemon = True
            self._release_timer.start()

    def _connect(self) -> duckdb.DuckDBPyConnection:
        with self._opening:
            return self._open_file()

    def _close_root(self) -> None:
        if self._root is not None:
            with self._opening:
                self._root.close()
            self._root = None

    def close_for_fork(self) -> None:
        """Close the file once no query is using it (for up to ``FORK_WAIT_S``), and keep every query
        out until ``resume_after_fork``."""
        self._lock.acquire()
        self._lock.wait_for(lambda: self._users == 0, timeout=FORK_WAIT_S)
        if self._users == 0:
            self._close_root()

    def resume_after_fork(self) -> None:
        self._lock.release()


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        status = path.stat()
    except FileNotFoundError:
        return None
    return status.st_dev, status.st_ino


_files: dict[Path, SharedFile] = {}
_files_lock = threading.Lock()


# In a forked child: the parent's files that were still open at the fork, kept from being closed.
_inherited: list[SharedFile] = []


def shared_file(path: Path, open_file: Callable[[], duckdb.DuckDBPyConnection]) -> SharedFile:
    """This process's ``SharedFile`` for ``path`` (made with ``open_file`` the first time)."""
    key = path.resolve()
    if any(file.path == key for file in _inherited):
        raise StoreError(
            f"{key} was in use when this process was forked from the one using it, and cannot be opened "
            "here: open it in a process started on its own."
        )
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


# The files a fork keeps closed until it is done.
_closed_for_fork: list[SharedFile] = []


def _close_before_fork() -> None:
    # Waiting for each file to be free, this holds no lock another query needs to end: a query may
    # open a cursor of another file (or the same) before it ends.
    with _files_lock:
        files = list(_files.values())
    for file in files:
        file.close_for_fork()
    _files_lock.acquire()
    made_meanwhile = [file for file in _files.values() if file not in files]
    for file in made_meanwhile:
        file.close_for_fork()
    _closed_for_fork[:] = files + made_meanwhile


def _resume_in_parent() -> None:
    for file in _closed_for_fork:
        file.resume_after_fork()
    _closed_for_fork.clear()
    _files_lock.release()


def _forget_in_child() -> None:
    global _files_lock
    _inherited.extend(file for file in _files.values() if file._root is not None)
    _files.clear()
    _closed_for_fork.clear()
    _files_lock = threading.Lock()


atexit.register(release_all)
os.register_at_fork(
    before=_close_before_fork, after_in_parent=_resume_in_parent, after_in_child=_forget_in_child
)
