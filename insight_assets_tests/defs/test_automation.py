"""The sensor that finds collections, the nightly schedule, and the definitions as a whole."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from insight_assets.core.collection_sources import InvalidCollectionKey, validate_collection_key
from insight_assets.core.storage.stores import Warehouse
from insight_assets.definitions import defs
from insight_assets.defs.automation import collection_folders_sensor, nightly_reingest
from insight_assets.defs.ingestion.assets import source_documents
from insight_assets.defs.partitions import collection_partitions
from insight_assets.defs.resources import EmbedderResource, LLMResource
from insight_assets.defs.sources import BUILD_SIGNATURE_TAG
from insight_assets_tests.conftest import DEMO_COLLECTION, REPO_ROOT, add_collection

DEMO_PDF = min(DEMO_COLLECTION.glob("*.pdf"))


def resources(storage) -> dict:
    return {"storage": storage, "llm": LLMResource(), "embedder": EmbedderResource(provider="hashing")}


def evaluate_sensor(instance, storage, cursor=None) -> dg.SensorResult:
    context = dg.build_sensor_context(instance=instance, cursor=cursor, resources=resources(storage))
    return collection_folders_sensor(context)


def apply_partition_requests(instance, result: dg.SensorResult) -> None:
    for request in result.dynamic_partitions_requests:
        instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))


def test_sensor_registers_new_folders_and_requests_a_run_for_each(instance, storage):
    add_collection(storage, "alpha", [DEMO_PDF])
    add_collection(storage, "beta", [DEMO_PDF])
    hidden = Path(storage.collections_root) / ".hidden"
    hidden.mkdir()

    first = evaluate_sensor(instance, storage)
    assert [sorted(r.partition_keys) for r in first.dynamic_partitions_requests] == [["alpha", "beta"]]
    assert sorted(r.partition_key for r in first.run_requests) == ["alpha", "beta"]
    # Each folder observed, its signature the data version the UI compares the assets with.
    observed = {event.partition: event.tags["dagster/data_version"] for event in first.asset_events}
    assert sorted(observed) == ["alpha", "beta"]
    assert all(BUILD_SIGNATURE_TAG in r.tags for r in first.run_requests)
    apply_partition_requests(instance, first)

    quiet = evaluate_sensor(instance, storage, cursor=first.cursor)
    assert quiet.run_requests == [] and quiet.dynamic_partitions_requests == [] and quiet.asset_events == []

    add_collection(storage, "alpha", [sorted(DEMO_COLLECTION.glob("*.pdf"))[1]])
    add_collection(storage, "gamma", [DEMO_PDF])
    changed = evaluate_sensor(instance, storage, cursor=quiet.cursor)
    assert sorted(r.partition_key for r in changed.run_requests) == ["alpha", "gamma"]
    assert sorted(event.partition for event in changed.asset_events) == ["alpha", "gamma"]
    assert {
        event.tags["dagster/data_version"] for event in changed.asset_events if event.partition == "alpha"
    } != {observed["alpha"]}
    assert [list(r.partition_keys) for r in changed.dynamic_partitions_requests] == [["gamma"]]
    assert all(".hidden" not in r.partition_key for r in first.run_requests + changed.run_requests)


def test_sensor_waits_for_a_new_folder_to_hold_a_pdf(instance, storage):
    folder = Path(storage.collections_root) / "incoming"
    folder.mkdir()
    (folder / "notes.txt").write_text("PDFs are on their way")
    waiting = evaluate_sensor(instance, storage)
    assert waiting.run_requests == [] and waiting.dynamic_partitions_requests == []

    add_collection(storage, "incoming", [DEMO_PDF])
    arrived = evaluate_sensor(instance, storage, cursor=waiting.cursor)
    assert [r.partition_key for r in arrived.run_requests] == ["incoming"]
    assert [list(r.partition_keys) for r in arrived.dynamic_partitions_requests] == [["incoming"]]
    apply_partition_requests(instance, arrived)

    # A known collection emptied of its PDFs is built again: its run says there is nothing left.
    (folder / DEMO_PDF.name).unlink()
    emptied = evaluate_sensor(instance, storage, cursor=arrived.cursor)
    assert [r.partition_key for r in emptied.run_requests] == ["incoming"]


def test_nightly_schedule_requests_only_collections_changed_since_their_last_successful_build(
    persistent_instance, storage
):
    instance = persistent_instance
    at = datetime.datetime(2026, 11, 22, 3, 0, tzinfo=datetime.UTC)

    def evaluate():
        with dg.build_schedule_context(
            instance=instance, scheduled_execution_time=at, resources=resources(storage)
        ) as context:
            return nightly_reingest(context)

    assert isinstance(evaluate(), dg.SkipReason)
    add_collection(storage, "alpha", [DEMO_PDF])
    add_collection(storage, "beta", [DEMO_PDF])
    instance.add_dynamic_partitions(collection_partitions.name, ["alpha", "beta", "deleted"])
    requests = evaluate()  # never built: both
    assert sorted(r.partition_key for r in requests) == ["alpha", "beta"]
    assert len({r.run_key for r in requests}) == 2 and all("2026-11-22" in r.run_key for r in requests)
    assert nightly_reingest.cron_schedule == "0 3 * * *"

    # A successful build of alpha, tagged with what it was built from: alpha is left alone.
    signature = {r.partition_key: r.tags[BUILD_SIGNATURE_TAG] for r in requests}["alpha"]
    dg.materialize(
        [source_documents],
        instance=instance,
        partition_key="alpha",
        resources={"storage": storage},
        tags={BUILD_SIGNATURE_TAG: signature},
    )
    assert [r.partition_key for r in evaluate()] == ["beta"]

    # A paper added to alpha's folder changes its signature: built again.
    add_collection(storage, "alpha", [sorted(DEMO_COLLECTION.glob("*.pdf"))[1]])
    assert sorted(r.partition_key for r in evaluate()) == ["alpha", "beta"]


@pytest.mark.parametrize("key", ["..", "a/../b", "../x", "/etc", "a\\b", "", ".git", "C:evil"])
def test_bad_collection_keys_are_refused_with_a_reason(key):
    with pytest.raises(InvalidCollectionKey, match="is refused: it"):
        validate_collection_key(key)


@pytest.mark.parametrize("key", ["scholarly-docs", "nlp_qa", "Collection 2026"])
def test_folder_names_are_valid_keys(key):
    assert validate_collection_key(key) == key


def test_definitions_load_with_the_main_job_sensor_and_schedule():
    # Loading consults the current instance's state storage; give it a live one, or it may find
    # the collected instance of an earlier test.
    with dg.instance_for_test():
        dg.Definitions.validate_loadable(defs)
    job = defs.resolve_job_def("build_collection")
    assert job.partitions_def == collection_partitions
    keys = {key.to_user_string() for key in defs.resolve_asset_graph().get_all_asset_keys()}
    assert {"source_documents", "parsed_documents", "chunks", "chunk_embeddings"} <= keys
    assert defs.resolve_sensor_def("collection_folders_sensor") is not None
    assert defs.resolve_schedule_def("nightly_reingest") is not None


def test_dagster_cli_validates_the_code_location():
    completed = subprocess.run(
        [sys.executable, "-m", "dagster", "definitions", "validate", "-m", "insight_assets.definitions"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


@pytest.mark.long
def test_shell_backfill_over_several_collections_with_dagster_asset_materialize(tmp_path):
    """`dagster asset materialize --partition-range` builds every collection of the range in one run
    (the single-run backfill policy)."""
    project = tmp_path / "project"
    collections = project / "data" / "collections"
    for name in ("a-papers", "b-papers"):
        (collections / name).mkdir(parents=True)
        (collections / name / DEMO_PDF.name).write_bytes(DEMO_PDF.read_bytes())
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.add_dynamic_partitions(collection_partitions.name, ["a-papers", "b-papers"])

    # The in-process executor: a step per process would spend most of the test importing.
    hashing = json.dumps(
        {
            "resources": {"embedder": {"config": {"provider": "hashing"}}},
            "execution": {"config": {"in_process": {}}},
        }
    )
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "dagster",
            "asset",
            "materialize",
            "-m",
            "insight_assets.definitions",
            # What the test checks is ingestion: building every method here would check nothing more.
            "--select",
            "source_documents,parsed_documents,chunks,chunk_embeddings",
            "--partition-range",
            "a-papers...b-papers",
            "--config-json",
            hashing,
        ],
        cwd=project,
        env={**os.environ, "DAGSTER_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    warehouse = Warehouse(project / "data" / "warehouse.duckdb")
    rows = warehouse.rows(
        "SELECT collection, count(*) AS n FROM chunks GROUP BY collection ORDER BY collection"
    )
    assert [row["collection"] for row in rows] == ["a-papers", "b-papers"]
    assert rows[0]["n"] == rows[1]["n"] > 0


def test_the_llm_resource_reads_the_environment_when_a_run_starts_not_at_import(monkeypatch):
    from insight_assets.defs.resources import LLMResource

    resource = LLMResource()  # what definitions.py builds, before any environment is set
    for name in ("INSIGHT_ASSETS_LLM_PROVIDER", "INSIGHT_ASSETS_LLM_MODEL", "INSIGHT_ASSETS_LLM_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    assert resource.settings().provider == "offline"

    monkeypatch.setenv("INSIGHT_ASSETS_LLM_PROVIDER", "openai-compatible")
    monkeypatch.setenv("INSIGHT_ASSETS_LLM_MODEL", "llama3.1:8b")
    monkeypatch.setenv("INSIGHT_ASSETS_LLM_BASE_URL", "http://localhost:11434/v1")
    settings = resource.settings()
    assert (settings.provider, settings.model, settings.base_url) == (
        "openai-compatible",
        "llama3.1:8b",
        "http://localhost:11434/v1",
    )
    # Configured values win over the environment.
    assert LLMResource(provider="offline").settings().provider == "offline"


def test_the_llm_resource_passes_its_retry_backoff_on_and_refuses_a_wait_of_zero():
    from insight_assets.core.llm import ConfigurationError
    from insight_assets.defs.resources import LLMResource

    settings = LLMResource(initial_backoff_s=0.25, max_backoff_s=2.0).settings()
    assert (settings.initial_backoff_s, settings.max_backoff_s) == (0.25, 2.0)
    with pytest.raises(ConfigurationError, match="initial_backoff_s must be positive"):
        LLMResource(initial_backoff_s=0).settings()
