"""Where a deployment keeps its state and runs its steps, chosen by environment variables.

Nothing set: everything on this machine (a SQLite Dagster instance under ``DAGSTER_HOME``, the
warehouse in one DuckDB file, LanceDB in a local folder, steps in local processes). Past one machine,
existing engines take over, each selected by one variable:

- ``INSIGHT_ASSETS_POSTGRES_URL`` (``postgresql://user:password@host:5432/db``): the Dagster instance
  on that PostgreSQL database, and the warehouse shared through it: DuckLake, its catalog in the
  database, its data files (Parquet) under ``INSIGHT_ASSETS_DATA_PATH``;
- ``INSIGHT_ASSETS_DATA_PATH``: DuckLake's data files, a directory every machine sees (default
  ``data/lake``);
- ``INSIGHT_ASSETS_LANCEDB_URI``: the vectors, a directory every machine sees or an object store
  (``s3://bucket/path``; default ``data/lancedb``);
- ``INSIGHT_ASSETS_DASK_SCHEDULER`` (``tcp://host:8786``): steps run on that Dask cluster's workers.

``check`` tries each chosen engine before anything runs, so that a wrong setting is one sentence
naming it, not a stack trace in the middle of a build.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

POSTGRES_URL_ENV = "INSIGHT_ASSETS_POSTGRES_URL"
DATA_PATH_ENV = "INSIGHT_ASSETS_DATA_PATH"
LANCEDB_URI_ENV = "INSIGHT_ASSETS_LANCEDB_URI"
DASK_SCHEDULER_ENV = "INSIGHT_ASSETS_DASK_SCHEDULER"
VARIABLES = (POSTGRES_URL_ENV, DATA_PATH_ENV, LANCEDB_URI_ENV, DASK_SCHEDULER_ENV)

DEFAULT_LAKE_DATA_PATH = "data/lake"
DEFAULT_LANCEDB_URI = "data/lancedb"
# How long a Postgres server or a Dask scheduler may take to answer before the setting is wrong.
CONNECT_TIMEOUT_S = 10


class DeploymentError(RuntimeError):
    """A deployment setting that does not work; the message names the variable and what to do."""


def _value(environ: Mapping[str, str], name: str) -> str | None:
    return environ.get(name, "").strip() or None


def normalized_postgres_url(url: str) -> str:
    """``url`` with the scheme SQLAlchemy and libpq both read (``postgres://`` is libpq's only)."""
    scheme, _, rest = url.partition("://")
    return f"postgresql://{rest}" if scheme in ("postgres", "postgresql") else url


def redacted(url: str) -> str:
    """``url`` with its password replaced by ``***``, for messages and the UI."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def is_local_path(location: str) -> bool:
    """Whether ``location`` is a folder on this machine rather than an object store's URI."""
    return "://" not in location or location.startswith("file://")


@dataclass(frozen=True)
class Deployment:
    """The engines a deployment uses; ``None`` for a setting means this machine's default."""

    postgres_url: str | None = None
    data_path: str | None = None
    lancedb_uri: str | None = None
    dask_scheduler: str | None = None

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> Deployment:
        postgres_url = _value(environ, POSTGRES_URL_ENV)
        return cls(
            postgres_url=normalized_postgres_url(postgres_url) if postgres_url else None,
            data_path=_value(environ, DATA_PATH_ENV),
            lancedb_uri=_value(environ, LANCEDB_URI_ENV),
            dask_scheduler=_value(environ, DASK_SCHEDULER_ENV),
        )

    @property
    def lake_data_path(self) -> str:
        return self.data_path or DEFAULT_LAKE_DATA_PATH

    @property
    def vectors_uri(self) -> str:
        return self.lancedb_uri or DEFAULT_LANCEDB_URI

    def describe(self) -> list[str]:
        """One line per engine, passwords left out."""
        if self.postgres_url:
            instance = f"Dagster instance: PostgreSQL {redacted(self.postgres_url)}"
            warehouse = (
                f"Warehouse: DuckLake, catalog in PostgreSQL {redacted(self.postgres_url)}, "
                f"data files under {self.lake_data_path}"
            )
        else:
            instance = "Dagster instance: SQLite under DAGSTER_HOME"
            warehouse = "Warehouse: a DuckDB file (storage resource's warehouse_path)"
        steps = (
            f"Steps: Dask cluster at {self.dask_scheduler}" if self.dask_scheduler else "Steps: this machine"
        )
        return [instance, warehouse, f"Vectors: LanceDB at {self.vectors_uri}", steps]

    def check(self, *, worker_resources: Iterable[str] = ()) -> None:
        """Try every engine this deployment names; raise ``DeploymentError`` for the first that fails.
        ``worker_resources``: the Dask resources steps ask for, which some worker must offer."""
        self.check_stores()
        self.check_steps(worker_resources=worker_resources)

    def check_stores(self) -> None:
        """Reach the instance's and the warehouse's database and write where the files go."""
        if self.postgres_url:
            check_postgres(self.postgres_url, POSTGRES_URL_ENV)
            check_writable(self.lake_data_path, DATA_PATH_ENV)
        if self.lancedb_uri:
            check_writable(self.lancedb_uri, LANCEDB_URI_ENV)

    def check_steps(self, *, worker_resources: Iterable[str] = ()) -> None:
        """Reach the Dask scheduler, when there is one, and see that its workers can run steps."""
        if self.dask_scheduler:
            check_dask_scheduler(self.dask_scheduler, DASK_SCHEDULER_ENV, worker_resources=worker_resources)


def check_postgres(url: str, setting: str) -> None:
    """Connect to the database ``url`` names and run one query."""
    import psycopg2

    try:
        connection = psycopg2.connect(normalized_postgres_url(url), connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg2.Error as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise DeploymentError(
            f"{setting}={redacted(url)}: cannot connect to PostgreSQL ({reason}). Start the server or "
            f"correct the address; unset {setting} to keep everything on this machine."
        ) from None
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    finally:
        connection.close()


def check_writable(location: str, setting: str) -> None:
    """Create ``location`` if it is a local folder, and write and remove a file in it. Object-store
    URIs are left to the store, which says what is wrong at its first write."""
    if not is_local_path(location):
        return
    folder = Path(location.removeprefix("file://"))
    probe = folder / f".insight_assets_probe_{uuid.uuid4().hex}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        raise DeploymentError(
            f"{setting}={location}: cannot write there ({error.strerror or error}). Point it at a "
            "folder this user may write, shared by every machine of the deployment."
        ) from None


def check_dask_scheduler(
    address: str, setting: str, *, worker_resources: Iterable[str] = (), timeout_s: float = CONNECT_TIMEOUT_S
) -> None:
    """Reach the scheduler at ``address`` and see that its workers can run steps: at least one
    worker, each with one thread (Dagster runs one step per process at a time), and some worker
    offering each of ``worker_resources`` (else the steps that ask for one would wait forever)."""
    from distributed import Client

    try:
        client = Client(address, timeout=timeout_s, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as error:
        raise DeploymentError(
            f"{setting}={address}: no Dask scheduler answered within {timeout_s:g} s ({error}). "
            f"Start one (`dask scheduler`) or correct the address; unset {setting} to run steps here."
        ) from None
    with client:
        workers = client.scheduler_info(n_workers=-1)["workers"].values()
    wanted = sorted(set(worker_resources))
    start_worker = f"dask worker {address} --nthreads 1" + (
        f' --resources "{" ".join(f"{name}=1" for name in wanted)}"' if wanted else ""
    )
    if not workers:
        raise DeploymentError(
            f"{setting}={address}: the Dask scheduler has no worker. Start one: {start_worker}"
        )
    threaded = [worker for worker in workers if worker.get("nthreads", 1) != 1]
    if threaded:
        raise DeploymentError(
            f"{setting}={address}: {len(threaded)} worker(s) run several threads, and Dagster runs one "
            f"step per process at a time. Start workers with one thread: {start_worker}"
        )
    offered = {name for worker in workers for name in (worker.get("resources") or {})}
    missing = [name for name in wanted if name not in offered]
    if missing:
        raise DeploymentError(
            f"{setting}={address}: no worker offers the resource(s) {', '.join(missing)}, which the steps "
            f"that load a model ask for (the Dask form of the pools). Start workers with: {start_worker}"
        )
