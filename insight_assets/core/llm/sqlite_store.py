"""The SQLite file behind both persistent stores (the response cache and the ledger).

WAL lets readers work while one process writes, and the busy timeout makes a second writer wait
for the lock instead of failing, so two processes (Dagster's multiprocess executor, two runs) can
use the same file at once. Each thread keeps its own connection (SQLite connections must not be
shared between threads); keeping them open also spares the checkpoint and sync that SQLite does
whenever the last connection to a WAL file closes.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BUSY_TIMEOUT_S = 30.0


class SQLiteFile:
    def __init__(self, path: Path, schema: str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self.transaction() as connection:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.executescript(schema)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection, inside a transaction committed on success."""
        connection = self._connection()
        with connection:
            yield connection

    def _connection(self) -> sqlite3.Connection:
        # A connection inherited through fork() must not be used by the child.
        if getattr(self._local, "pid", None) != os.getpid():
            connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S)
            # In WAL mode NORMAL cannot corrupt the file; a power cut may lose the last rows,
            # a fair price for a cache and a cost record not syncing on every call.
            connection.execute("PRAGMA synchronous=NORMAL")
            self._local.connection = connection
            self._local.pid = os.getpid()
        return self._local.connection
