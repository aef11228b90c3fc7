"""The Dagster instance's run queue and pools: the dagster.yaml written, a user's file kept, and
``dagster dev`` holding new collections in the queue instead of building them all at once."""

from __future__ import annotations

import itertools
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import dagster as dg
import pytest
import yaml

from insight_assets.app.in_process import PROCESS_TAG, end_abandoned_runs, process_tags
from insight_assets.app.instance import (
    BEGIN_MARKER,
    MAX_RUNS_ENV,
    ensure_instance_config,
    max_concurrent_runs,
)
from insight_assets.app.instance_storage import KeptOpenInstance, KeptOpenSqliteEventLogStorage
from insight_assets.core.deployment import POSTGRES_URL_ENV
from insight_assets.definitions import defs
from insight_assets.defs.pools import DASK_RESOURCES_TAG, LLM_POOL, POOLS
from insight_assets.defs.runs import ALL_ASSETS
from insight_assets_tests.conftest import DEMO_PDFS_BY_SIZE

STARTED, FAILURE = dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.FAILURE
SMALLEST_PDF = DEMO_PDFS_BY_SIZE[0]


def concurrency(home: Path):
    with dg.DagsterInstance.from_config(str(home)) as instance:
        return instance.get_concurrency_config()


def test_a_new_instance_queues_runs_by_the_cores_one_per_collection_and_one_model_step_per_pool(tmp_path):
    outcome = ensure_instance_config(tmp_path, environ={})
    assert outcome.action == "created" and outcome.message is None
    config = concurrency(tmp_path)
    assert config.run_queue_config.max_concurrent_runs == max_concurrent_runs({}) >= 1
    assert config.run_queue_config.tag_concurrency_limits == [
        {"key": "dagster/partition", "value": {"applyLimitPerUniqueValue": True}, "limit": 1}
    ]
    assert config.pool_config.default_pool_limit == 1
    assert "enabled: false" in outcome.path.read_text()  # telemetry stays off
    # SQLite under the instance's folder, in Dagster's files, the event log's kept open.
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        assert isinstance(instance, KeptOpenInstance)
        assert isinstance(instance.event_log_storage, KeptOpenSqliteEventLogStorage)
        instance.add_dynamic_partitions("collections", ["papers"])
    assert (tmp_path / "history" / "runs" / "index.db").is_file()


@pytest.mark.parametrize(("cores", "runs"), [(1, 1), (2, 1), (4, 2), (16, 8)])
def test_concurrent_runs_default_to_half_the_cores(cores, runs):
    assert max_concurrent_runs({}, cores=cores) == runs


def test_the_environment_variable_overrides_the_cores_at_the_next_start(tmp_path):
    ensure_instance_config(tmp_path, environ={})
    again = ensure_instance_config(tmp_path, environ={})
    assert again.action == "unchanged"
    raised = ensure_instance_config(tmp_path, environ={MAX_RUNS_ENV: "3"})
    assert raised.action == "refreshed"
    assert concurrency(tmp_path).run_queue_config.max_concurrent_runs == 3
    for bad in ("0", "two"):
        with pytest.raises(ValueError, match=MAX_RUNS_ENV):
            ensure_instance_config(tmp_path, environ={MAX_RUNS_ENV: bad})


def test_a_users_own_settings_are_kept_and_the_queue_added_beside_them(tmp_path):
    path = tmp_path / "dagster.yaml"
    users = "# my instance\ntelemetry:\n  enabled: true\nrun_monitoring:\n  enabled: true  # keep\n"
    path.write_text(users)
    outcome = ensure_instance_config(tmp_path, environ={MAX_RUNS_ENV: "2"})
    assert outcome.action == "added" and str(path) in outcome.message
    assert path.read_text().startswith(users)
    assert concurrency(tmp_path).run_queue_config.max_concurrent_runs == 2
    # Later starts rewrite only the block between the markers; the user's lines stay as they were.
    path.write_text(path.read_text() + "\n# a note added after the block\n")
    assert ensure_instance_config(tmp_path, environ={MAX_RUNS_ENV: "4"}).action == "refreshed"
    text = path.read_text()
    assert text.startswith(users) and text.endswith("# a note added after the block\n")
    assert text.count(BEGIN_MARKER) == 1
    assert concurrency(tmp_path).run_queue_config.max_concurrent_runs == 4


def test_a_file_that_configures_concurrency_itself_is_left_alone_and_the_user_told_what_it_lacks(tmp_path):
    path = tmp_path / "dagster.yaml"
    users = "concurrency:\n  runs:\n    max_concurrent_runs: 5\n"
    path.write_text(users)
    outcome = ensure_instance_config(tmp_path, environ={})
    assert outcome.action == "left_alone" and path.read_text() == users
    assert "'dagster/partition'" in outcome.message and "concurrency.pools.default_limit" in outcome.message
    assert "max_concurrent_runs:" in outcome.message  # the block to copy is shown
    assert "concurrency.runs.max_concurrent_runs" not in outcome.message.split("lacks", 1)[1].split(".", 1)[0]

    complete = (
        "run_queue:\n  max_concurrent_runs: 1\n  tag_concurrency_limits:\n"
        "    - key: dagster/partition\n      value: {applyLimitPerUniqueValue: true}\n      limit: 1\n"
        "concurrency:\n  pools:\n    default_limit: 2\n"
    )
    path.write_text(complete)
    assert ensure_instance_config(tmp_path, environ={}) == type(outcome)(path, "unchanged")


def test_an_unreadable_file_is_left_alone_with_what_to_add(tmp_path):
    path = tmp_path / "dagster.yaml"
    path.write_text("telemetry: [unclosed\n")
    outcome = ensure_instance_config(tmp_path, environ={})
    assert outcome.action == "left_alone" and "not valid YAML" in outcome.message
    assert path.read_text() == "telemetry: [unclosed\n"


def test_every_step_of_a_pool_asks_a_dask_worker_for_that_pool_as_a_resource():
    """dagster-dask claims no pool slots, so on a cluster the worker resources are the pools."""
    from dagster_dask.executor import DASK_RESOURCE_REQUIREMENTS_KEY, get_dask_resource_requirements

    assert DASK_RESOURCES_TAG == DASK_RESOURCE_REQUIREMENTS_KEY
    pooled_ops = [asset.node_def for asset in ALL_ASSETS if asset.node_def.pool]
    assert {op.pool for op in pooled_ops} == set(POOLS)
    for op in pooled_ops:
        assert get_dask_resource_requirements(op.tags) == {op.pool: 1}, op.name


def test_a_postgres_url_keeps_the_instance_there_and_unsetting_it_brings_it_back(tmp_path):
    path = tmp_path / "dagster.yaml"
    shared = {POSTGRES_URL_ENV: "postgresql://lab:hunter2@db.lab/insight"}
    ensure_instance_config(tmp_path, environ={})
    assert ensure_instance_config(tmp_path, environ=shared).action == "refreshed"
    settings = yaml.safe_load(path.read_text())
    # The URL is read from the variable when the instance loads: no password in the file.
    assert settings["storage"] == {"postgres": {"postgres_url": {"env": POSTGRES_URL_ENV}}}
    assert "hunter2" not in path.read_text()
    assert settings["concurrency"]["pools"]["default_limit"] == 1  # the run queue stays
    assert ensure_instance_config(tmp_path, environ=shared).action == "unchanged"
    assert ensure_instance_config(tmp_path, environ={}).action == "refreshed"
    settings = yaml.safe_load(path.read_text())
    assert "storage" not in settings
    assert settings["instance_class"] == {"module": KeptOpenInstance.__module__, "class": "KeptOpenInstance"}
    assert path.read_text().endswith("# <<< insight_assets storage\n")


def test_a_file_with_storage_of_its_own_keeps_it_and_the_user_is_told(tmp_path):
    path = tmp_path / "dagster.yaml"
    path.write_text("storage:\n  sqlite:\n    base_dir: /srv/dagster\n")
    # Without PostgreSQL there is nothing to say: the user's SQLite storage is kept as it is.
    outcome = ensure_instance_config(tmp_path, environ={})
    assert outcome.action == "added" and "configures the instance's storage" not in outcome.message
    assert "instance_class" not in yaml.safe_load(path.read_text())
    path.write_text("storage:\n  sqlite:\n    base_dir: /srv/dagster\n")
    outcome = ensure_instance_config(tmp_path, environ={POSTGRES_URL_ENV: "postgresql://db/insight"})
    assert (
        outcome.action == "added" and "configures the instance's storage itself (storage)" in outcome.message
    )
    assert yaml.safe_load(path.read_text())["storage"] == {"sqlite": {"base_dir": "/srv/dagster"}}


def _runs_by_status(home: Path) -> tuple[Counter, set[str]]:
    with dg.DagsterInstance.from_config(str(home)) as instance:
        runs = instance.get_runs()
    return Counter(run.status for run in runs), {run.tags.get("dagster/partition") for run in runs}


def _queue_history(home: Path) -> tuple[int, list[tuple[float, float]]]:
    """How many runs went through the queue, and the started runs' (start, end) in order of start
    (a run still going ends now)."""
    with dg.DagsterInstance.from_config(str(home)) as instance:
        records = instance.get_run_records()
        enqueued = sum(
            bool(instance.all_logs(record.dagster_run.run_id, of_type=dg.DagsterEventType.RUN_ENQUEUED))
            for record in records
        )
    spans = sorted((r.start_time, r.end_time or time.time()) for r in records if r.start_time is not None)
    return enqueued, spans


@pytest.mark.long
def test_dagster_dev_queues_five_new_collections_and_runs_one_at_a_time(tmp_path):
    """The sensor requests a run for each of five new folders; the queue starts one, holds four."""
    project = tmp_path / "project"
    names = [f"papers-{index}" for index in range(5)]
    for name in names:
        folder = project / "data" / "collections" / name
        folder.mkdir(parents=True)
        (folder / SMALLEST_PDF.name).write_bytes(SMALLEST_PDF.read_bytes())
    home = tmp_path / "dagster_home"
    ensure_instance_config(home, environ={MAX_RUNS_ENV: "1"})
    _runs_by_status(home)  # makes the instance's storage now, not in a race with dagster dev's
    env = {**os.environ, "DAGSTER_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "dagster", "dev", "-m", "insight_assets.definitions", "-p", "3977"]
    server = subprocess.Popen(
        command,
        cwd=project,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    in_progress = {dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED}
    most_in_progress = 0
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            assert server.poll() is None, server.stderr.read()[-3000:]
            statuses, partitions = _runs_by_status(home)
            most_in_progress = max(most_in_progress, sum(statuses[status] for status in in_progress))
            if partitions == set(names) and statuses[dg.DagsterRunStatus.STARTED] == 1:
                break
            time.sleep(1)
        # Watch a while longer: the queue must keep holding the others while one run builds.
        for _ in range(10):
            statuses, partitions = _runs_by_status(home)
            most_in_progress = max(most_in_progress, sum(statuses[status] for status in in_progress))
            time.sleep(1)
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
        server.stderr.close()
    assert partitions == set(names), f"the sensor requested runs for {sorted(partitions)}"
    assert most_in_progress == 1
    # What the queue did, from the runs' own records rather than from what a poll happened to see: a
    # slow machine can finish the first run before the sensor has requested the last.
    enqueued, spans = _queue_history(home)
    assert enqueued == len(names)
    assert all(end <= start for (_, end), (start, _) in itertools.pairwise(spans)), (
        f"runs overlapped: {spans}"
    )


def test_a_build_ends_the_runs_whose_process_died_and_frees_their_pool_slots(tmp_path):
    ensure_instance_config(tmp_path, environ={})
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host = socket.gethostname()
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        job = defs.resolve_job_def("build_collection")
        abandoned = instance.create_run_for_job(job, tags={PROCESS_TAG: f"{host}:{dead.pid}"}, status=STARTED)
        alive = instance.create_run_for_job(job, tags=process_tags(), status=STARTED)
        elsewhere = instance.create_run_for_job(
            job, tags={PROCESS_TAG: f"not-{host}:{dead.pid}"}, status=STARTED
        )
        instance.event_log_storage.set_concurrency_slots(LLM_POOL, 2)
        for run in (abandoned, alive):
            instance.event_log_storage.claim_concurrency_slot(LLM_POOL, run.run_id, "insights")

        assert end_abandoned_runs(instance) == [abandoned.run_id]
        statuses = {
            run.run_id: instance.get_run_by_id(run.run_id).status for run in (abandoned, alive, elsewhere)
        }
        assert statuses == {abandoned.run_id: FAILURE, alive.run_id: STARTED, elsewhere.run_id: STARTED}
        claimed = instance.event_log_storage.get_concurrency_info(LLM_POOL).claimed_slots
        assert [slot.run_id for slot in claimed] == [alive.run_id]
        assert end_abandoned_runs(instance) == []
