"""Past one machine, on real servers: the Dagster instance and the warehouse in PostgreSQL (DuckLake),
LanceDB in a shared folder, steps on a Dask cluster of two worker processes. What it builds must be
what the embedded default builds, and a wrong setting must stop a build before anything is written."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import numpy as np
import pytest
import yaml

from insight_assets.app.instance import ensure_instance_config
from insight_assets.core.deployment import (
    DASK_SCHEDULER_ENV,
    DATA_PATH_ENV,
    LANCEDB_URI_ENV,
    POSTGRES_URL_ENV,
)
from insight_assets.core.storage.lake import LakeWarehouse
from insight_assets.core.storage.stores import VectorStore, Warehouse, warehouse_tables
from insight_assets.defs.pools import POOLS
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource
from insight_assets.defs.runs import register_collections
from insight_assets_tests.conftest import DEMO_PDFS_BY_SIZE, add_collection
from insight_assets_tests.defs.helpers import assets_up_to, materialize_collection
from insight_assets_tests.servers import free_port, materialize_from_shell

pytestmark = pytest.mark.scale

# The demo's four smallest papers, two per collection.
COLLECTIONS = {"alpha": DEMO_PDFS_BY_SIZE[:2], "beta": DEMO_PDFS_BY_SIZE[2:4]}
# Ingestion, and InsightGen's group with what it is made from (the curated questions and answers).
SELECTION = assets_up_to("method_report")
SELECTED_KEYS = sorted({key.to_user_string() for asset in SELECTION for key in asset.keys})
BIN = Path(sys.executable).parent


def _storage(root: Path, **shared) -> StorageResource:
    return StorageResource(
        collections_root=str(root / "data" / "collections"),  # where the command line looks, from root
        warehouse_path=str(root / "warehouse.duckdb"),
        reports_dir=str(root / "reports"),
        adapters_dir=str(root / "adapters"),
        **shared,
    )


def _run_config(storage: StorageResource, data_dir: Path) -> dict:
    """Resource config for runs whose steps load the definitions themselves (on Dask workers)."""
    paths = ("collections_root", "reports_dir", "adapters_dir")
    return {
        "resources": {
            "storage": {"config": {name: getattr(storage, name) for name in paths}},
            "embedder": {"config": {"provider": "hashing"}},
            "llm": {"config": {"data_dir": str(data_dir)}},
        }
    }


class SharedDeployment:
    """The variables of a deployment on ``postgres_url``, with its data and vectors under ``root``."""

    def __init__(self, root: Path, postgres_url: str, scheduler: str | None = None):
        self.root = root
        self.home = root / "dagster_home"
        self.environment = {
            POSTGRES_URL_ENV: postgres_url,
            DATA_PATH_ENV: str(root / "lake"),
            LANCEDB_URI_ENV: str(root / "lancedb"),
            "DAGSTER_HOME": str(self.home),
        }
        if scheduler:
            self.environment[DASK_SCHEDULER_ENV] = scheduler
        self.storage = _storage(root)
        self.worker_pids: set[int] = set()

    def env(self, **changes: str) -> dict[str, str]:
        return {**os.environ, **self.environment, **changes}

    def instance(self) -> dg.DagsterInstance:
        """The deployment's Dagster instance (its storage URL read from the variable as it loads)."""
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(POSTGRES_URL_ENV, self.environment[POSTGRES_URL_ENV])
            return dg.DagsterInstance.from_config(str(self.home))


@pytest.fixture(scope="module")
def shared(postgres_server, tmp_path_factory) -> Iterator[SharedDeployment]:
    """A shared deployment and a Dask cluster of two worker processes, each offering the pools as
    resources and started with the deployment's variables, as `dask worker` beside it would be."""
    from distributed import LocalCluster

    root = tmp_path_factory.mktemp("shared")
    port = free_port()
    deployment = SharedDeployment(root, postgres_server.new_database("scale"), f"tcp://127.0.0.1:{port}")
    ensure_instance_config(deployment.home, environ=deployment.environment)  # as ./run writes it
    for name, pdfs in COLLECTIONS.items():
        add_collection(deployment.storage, name, pdfs)
    with LocalCluster(
        host="127.0.0.1",
        scheduler_port=port,
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        resources=dict.fromkeys(POOLS, 1),
        dashboard_address=":0",
        env=deployment.environment,
    ) as cluster:
        cluster.wait_for_workers(2, timeout=120)
        deployment.worker_pids = _worker_pids(cluster)
        yield deployment


def _worker_pids(cluster) -> set[int]:
    from distributed import Client

    with Client(cluster) as client:
        return set(client.run(os.getpid).values())


@pytest.fixture(scope="module")
def embedded(tmp_path_factory) -> StorageResource:
    """The same collections built by the embedded default: one process, a DuckDB file, LanceDB in
    a local folder, an ephemeral SQLite instance."""
    root = tmp_path_factory.mktemp("embedded")
    storage = _storage(root, lancedb_uri=str(root / "lancedb"))
    with dg.DagsterInstance.ephemeral() as instance:
        for name, pdfs in COLLECTIONS.items():
            add_collection(storage, name, pdfs)
            llm = LLMResource(data_dir=str(root / "data"))
            hashing = EmbedderResource(provider="hashing")
            materialize_collection(instance, storage, hashing, name, llm=llm, assets=SELECTION)
    return storage


def _materialize(deployment: SharedDeployment, collection: str) -> subprocess.CompletedProcess:
    """``dagster asset materialize`` for one collection, as from a shell on the deployment."""
    config = deployment.root / "run_config.yaml"
    config.write_text(yaml.safe_dump(_run_config(deployment.storage, deployment.root / "data")))
    return materialize_from_shell(SELECTED_KEYS, collection, config, deployment.env())


def _rows_per_table(warehouse: Warehouse, collection: str) -> dict[str, int]:
    with warehouse.session() as session:
        return {
            table: session.rows(f"SELECT count(*) AS n FROM {table} WHERE collection = ?", [collection])[0][
                "n"
            ]
            for table, columns in warehouse_tables().items()
            if columns.split()[0] == "collection"
        }


def _vectors(uri: str, collection: str) -> dict[tuple[str, str], np.ndarray]:
    table = VectorStore(uri).read(collection)
    return {
        (row["profile"], row["chunk_id"]): np.asarray(row["vector"], dtype=np.float32)
        for row in table.to_pylist()
    }


def test_two_collections_built_at_once_on_dask_land_as_the_embedded_default_builds_them(shared, embedded):
    with shared.instance() as instance:
        register_collections(instance, list(COLLECTIONS))
    results: dict[str, subprocess.CompletedProcess] = {}
    runs = [
        threading.Thread(target=lambda name=name: results.__setitem__(name, _materialize(shared, name)))
        for name in COLLECTIONS
    ]
    for run in runs:  # both at the same moment: their steps write the same tables at once
        run.start()
    for run in runs:
        run.join()
    for name, result in results.items():
        assert result.returncode == 0, f"{name}: {result.stdout[-3000:]}{result.stderr[-3000:]}"

    lake = LakeWarehouse(shared.environment[POSTGRES_URL_ENV], shared.environment[DATA_PATH_ENV])
    for name in COLLECTIONS:
        rows = _rows_per_table(lake, name)
        assert rows == _rows_per_table(embedded.warehouse, name)
        assert rows["parsed_documents"] == 2 and rows["chunks"] > 0 and rows["insights"] > 0
        chunk_ids = "SELECT profile, chunk_id FROM chunks WHERE collection = ? ORDER BY profile, chunk_id"
        assert lake.rows(chunk_ids, [name]) == embedded.warehouse.rows(chunk_ids, [name])
        vectors, expected = (
            _vectors(shared.environment[LANCEDB_URI_ENV], name),
            _vectors(embedded.vectors_uri, name),
        )
        assert vectors.keys() == expected.keys()
        assert all(np.array_equal(vectors[key], expected[key]) for key in expected)

    # The runs are in the PostgreSQL instance, and their steps ran on both workers, not here.
    with shared.instance() as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        records = instance.get_run_records(dg.RunsFilter(tags={"dagster/partition": "alpha"}))
        records += instance.get_run_records(dg.RunsFilter(tags={"dagster/partition": "beta"}))
        assert [record.dagster_run.status for record in records] == [dg.DagsterRunStatus.SUCCESS] * 2
        step_pids = {
            event.dagster_event.pid
            for record in records
            for event in instance.all_logs(record.dagster_run.run_id, of_type=dg.DagsterEventType.STEP_START)
        }
    assert step_pids == shared.worker_pids

    # The command line reads the shared warehouse back.
    listed = subprocess.run(
        [str(BIN / "insight-assets"), "collections"],
        check=False,
        capture_output=True,
        text=True,
        env=shared.env(),
        timeout=300,
        cwd=shared.root,
    )
    assert listed.returncode == 0, listed.stderr
    assert "alpha: 2 documents" in listed.stdout and "beta: 2 documents" in listed.stdout
    assert "DuckLake (catalog postgresql://postgres@127.0.0.1" in listed.stdout


def test_a_step_whose_upstream_step_failed_is_not_run_on_the_cluster(shared, tmp_path):
    """dagster-dask would run it anyway, on whatever an earlier build left."""
    folder = Path(shared.storage.collections_root) / "unreadable"
    folder.mkdir()
    (folder / "notes.pdf").write_text("These are notes, not a PDF. " * 20)
    with shared.instance() as instance:
        register_collections(instance, ["unreadable"])
    result = _materialize(shared, "unreadable")
    assert result.returncode != 0 and "no usable documents" in result.stdout + result.stderr
    with shared.instance() as instance:
        (record,) = instance.get_run_records(dg.RunsFilter(tags={"dagster/partition": "unreadable"}))
        run_id = record.dagster_run.run_id
        started = {
            event.step_key for event in instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_START)
        }
        said = [
            event.message for event in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
        ]
    assert started == {"source_documents", "parsed_documents"}
    assert "chunks was not run: a step it depends on did not succeed." in said


def test_workers_that_cannot_run_the_steps_are_said_before_any_run(postgres_server):
    """No worker offering the pools' resources (its model steps would wait forever), or workers
    running several steps at once in one process."""
    from distributed import LocalCluster

    from insight_assets.core.deployment import DeploymentError, check_dask_scheduler

    with (
        LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster,
        pytest.raises(DeploymentError, match="no worker offers the resource.*embedding, llm"),
    ):
        check_dask_scheduler(cluster.scheduler_address, DASK_SCHEDULER_ENV, worker_resources=POOLS)
    with (
        LocalCluster(
            n_workers=1,
            threads_per_worker=2,
            processes=False,
            dashboard_address=":0",
            resources=dict.fromkeys(POOLS, 1),
        ) as cluster,
        pytest.raises(DeploymentError, match="run several threads"),
    ):
        check_dask_scheduler(cluster.scheduler_address, DASK_SCHEDULER_ENV, worker_resources=POOLS)


def _build(root: Path, **variables: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "insight-assets"), "build", "--collection", "alpha"],
        check=False,
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "DAGSTER_HOME": str(root / "dagster_home"), **variables},
        timeout=300,
    )


def _files_under(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file())


def _database_tables(url: str) -> list[str]:
    import psycopg2

    with psycopg2.connect(url) as connection, connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_schema || '.' || table_name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
        )
        return [row[0] for row in cursor.fetchall()]


def test_a_setting_that_does_not_work_stops_the_build_before_anything_is_written(postgres_server, tmp_path):
    add_collection(_storage(tmp_path), "alpha", DEMO_PDFS_BY_SIZE[:1])
    before = _files_under(tmp_path)
    closed = f"postgresql://lab:hunter2@127.0.0.1:{free_port()}/insight"
    unreachable = _build(tmp_path, **{POSTGRES_URL_ENV: closed})
    assert unreachable.returncode == 2
    assert unreachable.stderr.startswith(
        f"insight-assets build: {POSTGRES_URL_ENV}=postgresql://lab:***@127.0.0.1"
    )
    assert "hunter2" not in unreachable.stderr + unreachable.stdout and "Traceback" not in unreachable.stderr

    database = postgres_server.new_database()
    (tmp_path / "a-file").write_text("")
    unwritable = _build(
        tmp_path, **{POSTGRES_URL_ENV: database, DATA_PATH_ENV: str(tmp_path / "a-file" / "lake")}
    )
    assert unwritable.returncode == 2 and unwritable.stderr.startswith(
        f"insight-assets build: {DATA_PATH_ENV}="
    )

    silent = f"tcp://127.0.0.1:{free_port()}"
    no_scheduler = _build(tmp_path, **{POSTGRES_URL_ENV: database, DASK_SCHEDULER_ENV: silent})
    assert no_scheduler.returncode == 2
    assert no_scheduler.stderr.startswith(
        f"insight-assets build: {DASK_SCHEDULER_ENV}={silent}: no Dask scheduler"
    )

    # Nothing half-written: no instance, no tables in the database, no file beside the collection
    # (the default data path was made, and is empty).
    assert _database_tables(database) == []
    assert _files_under(tmp_path) == sorted([*before, "a-file"])
