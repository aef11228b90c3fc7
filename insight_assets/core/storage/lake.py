"""The shared warehouse: DuckLake, its catalog in PostgreSQL and its data files (Parquet) in a
directory every machine sees.

The tables, the SQL and the transactions are the embedded warehouse's (DuckDB runs both), so no
method knows which one it writes to. What differs is how a connection is opened: each process
attaches the lake once (a fifth of a second: the catalog is read) and hands out cursors of that one
attachment. Writers on other machines meet in the catalog's transactions; two that change the same
table at once conflict, and ``Warehouse`` replays the loser (a write replaces one collection's rows,
so replaying it is safe).

DuckDB's extensions are tied to its version. They come from PyPI wheels built for the pinned DuckDB
and are loaded from those files; DuckDB is told never to download one.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import random
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from insight_assets.core.deployment import DeploymentError, check_writable, is_local_path, redacted
from insight_assets.core.startup.lazy import duckdb
from insight_assets.core.storage.stores import StoreError, Warehouse

# The catalog's tables live in this schema of the Postgres database, apart from Dagster's own.
METADATA_SCHEMA = "insight_assets_lake"
LAKE = "lake"
# How long a process keeps trying while another creates a new lake's catalog, and how that shows.
CATALOG_RACE_S = 30.0
_CREATION_RACE = ("duplicate key", "already exists")

# (package, file in the wheel, name DuckDB loads it under: the name its entry point was built with).
_EXTENSIONS = (
    ("duckdb_extension_postgres", "postgres", "postgres_scanner"),
    ("duckdb_extension_ducklake", "ducklake", "ducklake"),
)

_lock = threading.Lock()
# One attached lake per (catalog, data path) and process; a forked child opens its own.
_attached: dict[tuple[str, str, int], duckdb.DuckDBPyConnection] = {}


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def extension_file(package: str, stem: str, load_name: str) -> Path:
    """The extension's file for this DuckDB, under the name DuckDB expects (a link beside it when the
    wheel names it otherwise)."""
    try:
        module = importlib.import_module(package)
    except ImportError:
        raise StoreError(
            f"The shared warehouse needs the Python package {package.replace('_', '-')}=={duckdb.__version__} "
            "(a dependency of insight_assets): reinstall the project (./run does)."
        ) from None
    shipped = (
        Path(module.__file__).parent / "extensions" / f"v{duckdb.__version__}" / f"{stem}.duckdb_extension"
    )
    if not shipped.is_file():
        raise StoreError(
            f"{package.replace('_', '-')} has no extension for DuckDB {duckdb.__version__} ({shipped} is missing): "
            "install the version that matches DuckDB's."
        )
    if stem == load_name:
        return shipped
    folder = Path(tempfile.gettempdir()) / f"insight_assets-duckdb-{duckdb.__version__}-{os.getuid()}"
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / f"{load_name}.duckdb_extension"
    if not link.exists() or link.resolve() != shipped.resolve():
        # Made aside and renamed over, so that a process loading it never sees a half-made link.
        staging = folder / f".{load_name}.{os.getpid()}.{threading.get_ident()}"
        staging.unlink(missing_ok=True)
        staging.symlink_to(shipped)
        staging.replace(link)
    return link


def _attach(catalog_url: str, data_path: str) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the lake attached as ``lake``. The first process to attach a new
    lake creates its catalog; another doing so at the same moment fails on PostgreSQL's unique
    names, and tries again until it finds the catalog made."""
    deadline = time.monotonic() + CATALOG_RACE_S
    while True:
        connection = duckdb.connect(
            config={"autoinstall_known_extensions": False, "autoload_known_extensions": False}
        )
        try:
            for package, stem, load_name in _EXTENSIONS:
                connection.execute(f"LOAD {_quoted(str(extension_file(package, stem, load_name)))}")
            connection.execute(
                f"ATTACH {_quoted('ducklake:postgres:' + catalog_url)} AS {LAKE} "
                f"(DATA_PATH {_quoted(data_path)}, METADATA_SCHEMA {_quoted(METADATA_SCHEMA)})"
            )
            return connection
        except duckdb.Error as error:
            connection.close()
            message = str(error)
            if any(race in message for race in _CREATION_RACE) and time.monotonic() < deadline:
                time.sleep(random.uniform(0.05, 0.3))
                continue
            # DuckDB's message quotes the URL it was given, password included.
            reason = message.strip().splitlines()[0].replace(catalog_url, redacted(catalog_url))
            raise StoreError(
                f"Cannot open the shared warehouse (DuckLake, catalog in {redacted(catalog_url)}, data "
                f"files under {data_path}): {reason}"
            ) from None


class LakeWarehouse(Warehouse):
    """The warehouse as a DuckLake: the catalog in the PostgreSQL database ``catalog_url`` names,
    the data files under ``data_path`` (a local or shared folder)."""

    def __init__(self, catalog_url: str, data_path: str | Path):
        self.catalog_url = catalog_url
        data_path = str(data_path)
        # The catalog keeps the path it was made with: every process must name the same folder.
        self.data_path = str(Path(data_path).resolve()) if is_local_path(data_path) else data_path

    @property
    def location(self) -> str:
        return f"DuckLake (catalog {redacted(self.catalog_url)}, data {self.data_path})"

    def _root(self) -> duckdb.DuckDBPyConnection:
        key = (self.catalog_url, self.data_path, os.getpid())
        with _lock:
            if key not in _attached:
                try:
                    check_writable(self.data_path, "the warehouse's data path")
                except DeploymentError as error:
                    raise StoreError(str(error)) from None
                _attached[key] = _attach(self.catalog_url, self.data_path)
            return _attached[key]

    @contextlib.contextmanager
    def _open(self) -> Iterator[duckdb.DuckDBPyConnection]:
        cursor = self._root().cursor()
        try:
            cursor.execute(f"USE {LAKE}")
            yield cursor
        finally:
            cursor.close()
