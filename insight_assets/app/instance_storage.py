"""The instance's SQLite storage with its event log kept open: the class ``dagster.yaml`` names.

Dagster's SQLite event log (one file per run, and an index file for asset events, partitions and
pool slots) makes a new SQLAlchemy engine, opens the file, and closes it again for every event it
writes and every query it reads. Closing the last connection to a WAL database also checkpoints it.
A build's run writes a few hundred events and asks the index a few hundred questions: on one core
of the Zen 3 machine, a one-paper build with nothing to rebuild took 16 to 19 s (under a profiler,
20 of its 31 s were the storage's). ``KeptOpenSqliteEventLogStorage`` keeps one connection per file
open between uses instead (the index's, and the ``KEPT_RUN_FILES`` run files used last): the same
rerun takes 10 to 12 s.

The files, their schema and their WAL mode are Dagster's own, so every process reads them as before,
and an instance without this class (``dagster`` run elsewhere) reads the same history. Two things
change, and both are handled here:

- The UI follows a running run by watching its file for changes, and a WAL database's file changes
  only when the WAL is checkpointed, which Dagster's close did after every write. A run file is
  checkpointed after each use instead (a passive checkpoint: it never waits for readers).
- ``wipe`` deletes run files: their connections are closed first, or writes would go to the
  deleted file.

``KeptOpenInstance`` is Dagster's instance with this storage as its default (``instance_class`` in
``dagster.yaml``, which ``app/instance.py`` writes); a ``storage`` block of the user's, or PostgreSQL,
still wins.
"""

from __future__ import annotations

import atexit
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import dagster as dg
import yaml
from dagster._core.instance.ref import InstanceRef
from dagster._core.storage.base_storage import DagsterStorage
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME, SqliteEventLogStorage
from dagster._core.storage.runs import SqliteRunStorage
from dagster._core.storage.schedules import SqliteScheduleStorage
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from dagster._core.storage.sqlite_storage import (
    DagsterSqliteStorage,
    _event_logs_directory,
    _runs_directory,
    _schedule_directory,
)
from dagster._serdes import ConfigurableClassData
from sqlalchemy import create_engine

# Run files kept open besides the index: a build writes one run's; the UI reads a few at a time.
KEPT_RUN_FILES = 8

_OPEN: weakref.WeakSet[KeptOpenSqliteEventLogStorage] = weakref.WeakSet()


class KeptOpenSqliteEventLogStorage(SqliteEventLogStorage):
    """Dagster's SQLite event log, with one connection per file kept open between uses."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        self._engines: OrderedDict[str, Any] = OrderedDict()
        super().__init__(base_dir, inst_data)
        _OPEN.add(self)

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Mapping[str, Any]
    ) -> KeptOpenSqliteEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Any]:
        with self._db_lock:
            engine = self._engine(shard)
            with engine.connect() as connection:
                with connection.begin():
                    yield connection
                if shard != INDEX_SHARD_NAME:
                    # What the UI's watch of the run file sees (see the module docstring).
                    connection.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")

    def _engine(self, shard: str) -> Any:
        """The file's engine, made (and the file set up) on first use; the run file used longest ago
        is closed when more than ``KEPT_RUN_FILES`` are open."""
        engine = self._engines.pop(shard, None)
        if engine is None:
            # One connection kept (``_db_lock`` lets one thread at a time use it, hence any thread
            # may); setting up a new file opens a second for a moment.
            engine = create_engine(
                self.conn_string_for_shard(shard),
                pool_size=1,
                max_overflow=2,
                connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS, "check_same_thread": False},
            )
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
        self._engines[shard] = engine
        runs = [name for name in self._engines if name != INDEX_SHARD_NAME]
        for name in runs[: max(0, len(runs) - KEPT_RUN_FILES)]:
            self._engines.pop(name).dispose()
        return engine

    def close_files(self, *, keep_index: bool = False) -> None:
        """Close the connections kept open (those to run files only, with ``keep_index``)."""
        with self._db_lock:
            for name in list(self._engines):
                if not (keep_index and name == INDEX_SHARD_NAME):
                    self._engines.pop(name).dispose()

    def wipe(self) -> None:
        self.close_files(keep_index=True)
        super().wipe()

    def dispose(self) -> None:
        self.close_files()
        super().dispose()


@atexit.register
def _close_all() -> None:
    """Close every kept connection as the process ends: each file's WAL is folded into it, so the
    folder holds whole files once a command is done."""
    for storage in list(_OPEN):
        storage.close_files()


class KeptOpenSqliteStorage(DagsterSqliteStorage):
    """Dagster's SQLite storage under ``base_dir`` (runs, event logs, schedules, in Dagster's
    folders), its event log ``KeptOpenSqliteEventLogStorage``."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        self.base_dir = base_dir
        self._run_storage = SqliteRunStorage.from_local(_runs_directory(base_dir))
        self._event_log_storage = KeptOpenSqliteEventLogStorage(_event_logs_directory(base_dir))
        self._schedule_storage = SqliteScheduleStorage.from_local(_schedule_directory(base_dir))
        self._inst_data = inst_data
        DagsterStorage.__init__(self)

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Mapping[str, Any]
    ) -> KeptOpenSqliteStorage:
        return cls.from_local(inst_data=inst_data, **config_value)

    @property
    def event_storage_data(self) -> ConfigurableClassData:
        return _class_data(KeptOpenSqliteEventLogStorage, base_dir=_event_logs_directory(self.base_dir))


class KeptOpenInstance(dg.DagsterInstance):
    """Dagster's instance, whose default storage (no ``storage`` in ``dagster.yaml``) is
    ``KeptOpenSqliteStorage`` under the instance's folder instead of Dagster's SQLite storage."""

    @classmethod
    def config_schema(cls) -> dict:
        return {}

    @staticmethod
    def config_defaults(base_dir: str) -> Mapping[str, ConfigurableClassData | None]:
        return {
            **InstanceRef.config_defaults(base_dir),
            "storage": _class_data(KeptOpenSqliteStorage, base_dir=base_dir),
            "event_log_storage": _class_data(
                KeptOpenSqliteEventLogStorage, base_dir=_event_logs_directory(base_dir)
            ),
        }


def _class_data(cls: type, **config: str) -> ConfigurableClassData:
    return ConfigurableClassData(cls.__module__, cls.__name__, yaml.dump(config, default_flow_style=False))
