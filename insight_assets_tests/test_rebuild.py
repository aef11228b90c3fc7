"""Reruns recompute only what is stale, as a person sees it: `insight-assets build` of a demo paper
in new processes. The UI's API (GraphQL) shows the collection fresh; a second paper added
makes it stale, the sensor and the nightly schedule ask for a build of it alone, and the build reads
only that paper (one file parsed and embedded, the per-paper model work done for it alone, the
collection-wide steps rebuilt saying why); then a build with nothing changed, under another hash
seed, does no work at all and changes no table, vector or file."""

from __future__ import annotations

import contextlib
import datetime
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from dagster_graphql.test.utils import define_out_of_process_workspace, execute_dagster_graphql

from insight_assets.defs.automation import collection_folders_sensor, nightly_reingest
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource
from insight_assets_tests.command_line import SMALLEST_DEMO_PDF, BuiltProject, run_cli
from insight_assets_tests.conftest import DEMO_PDFS_BY_SIZE, REPO_ROOT

COLLECTION = BuiltProject.COLLECTION
# The paper added to the built one: the demo's next smallest.
ADDED = DEMO_PDFS_BY_SIZE[1]
# Model work done per paper (or per chunk of a paper): only a new paper's is done again.
PER_PAPER_STEPS = ("compressed_documents", "xsum_questions", "paper_summaries", "knowledge_triples")
STALENESS = """
query Staleness($partition: String) {
  assetNodes { assetKey { path } isMaterializable staleStatus(partition: $partition) }
}"""


def build(project: Path, seed: str) -> None:
    built = run_cli(project, "build", "--collection", COLLECTION, environment={"PYTHONHASHSEED": seed})
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-3000:]


def open_instance(project: Path) -> dg.DagsterInstance:
    return dg.DagsterInstance.from_config(str(project / "home"))


def last_run(project: Path) -> tuple[str, dict[str, dict]]:
    """The last run's id and each asset's materialization metadata in it."""
    with open_instance(project) as instance:
        run = instance.get_runs(limit=1)[0]
        records = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)
    found = {}
    for record in records:
        materialization = record.dagster_event.event_specific_data.materialization
        found[materialization.asset_key.to_user_string()] = {
            key: value.value for key, value in materialization.metadata.items()
        }
    return run.run_id, found


def ledger(project: Path, run_id: str | None = None) -> list[tuple[str, int]]:
    """(asset, cache hit) of each model call the ledger holds (of one run)."""
    with sqlite3.connect(project / "data" / "cache" / "llm_ledger.sqlite") as connection:
        query = "SELECT asset, cache_hit FROM calls" + (" WHERE run_id = ?" if run_id else "")
        return connection.execute(query, [run_id] if run_id else []).fetchall()


def tables(project: Path) -> dict[str, list[str]]:
    """Every warehouse table's rows but the build notes, in a stable order."""
    with duckdb.connect(str(project / "data" / "warehouse.duckdb"), read_only=True) as db:
        names = [row[0] for row in db.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        return {
            name: sorted(map(repr, db.execute(f"SELECT * FROM {name}").fetchall()))
            for name in names
            if name != "asset_builds"
        }


def files(project: Path) -> dict[str, int]:
    """Each file the stores hold outside the warehouse (vectors, reports, adapters): its mtime."""
    data = project / "data"
    return {
        str(path.relative_to(data)): path.stat().st_mtime_ns
        for folder in ("lancedb", "reports", "adapters")
        for path in (data / folder).rglob("*")
        if path.is_file()
    }


@contextlib.contextmanager
def ui_api(project: Path) -> Iterator:
    """The UI's API (GraphQL) over the project's instance, its code server kept for the whole test."""
    with (
        open_instance(project) as instance,
        define_out_of_process_workspace(
            str(REPO_ROOT / "insight_assets" / "definitions.py"), "defs", instance
        ) as workspace,
    ):
        yield workspace


def staleness(workspace) -> dict[str, str]:
    """Each asset's stale status for the collection, as the UI reads it (a new request each time)."""
    result = execute_dagster_graphql(workspace.create_request_context(), STALENESS, {"partition": COLLECTION})
    assert not result.errors, result.errors
    return {
        "/".join(node["assetKey"]["path"]): node["staleStatus"]
        for node in result.data["assetNodes"]
        if node["isMaterializable"]
    }


def resources(project: Path) -> dict:
    data = project / "data"
    return {
        "storage": StorageResource(collections_root=str(data / "collections")),
        "llm": LLMResource(),
        "embedder": EmbedderResource(),
    }


def nightly(project: Path) -> list[str] | dg.SkipReason:
    at = datetime.datetime(2026, 11, 27, 3, 0, tzinfo=datetime.UTC)
    with (
        open_instance(project) as instance,
        dg.build_schedule_context(
            instance=instance, scheduled_execution_time=at, resources=resources(project)
        ) as context,
    ):
        found = nightly_reingest(context)
    return found if isinstance(found, dg.SkipReason) else [request.partition_key for request in found]


@pytest.mark.long
def test_a_rebuild_reads_only_what_changed_and_nothing_when_nothing_did(tmp_path, built_by_cli: BuiltProject):
    project = built_by_cli.copy(tmp_path)  # built under PYTHONHASHSEED=1
    folder = project / "data" / "collections" / COLLECTION
    assert [path.name for path in folder.glob("*.pdf")] == [SMALLEST_DEMO_PDF.name] != [ADDED.name]
    first_run, _ = last_run(project)
    # One code server for the test's GraphQL reads: the definitions do not change, the instance does.
    with ui_api(project) as workspace:
        assert all(value == "FRESH" for value in staleness(workspace).values())
        assert isinstance(nightly(project), dg.SkipReason)

        # A second paper: the folder sensor observes it, and the UI shows the collection stale.
        shutil.copyfile(ADDED, folder / ADDED.name)
        with open_instance(project) as instance:
            context = dg.build_sensor_context(instance=instance, resources=resources(project))
            sensed = collection_folders_sensor(context)
            for event in sensed.asset_events:
                instance.report_runless_asset_event(event)
        assert [request.partition_key for request in sensed.run_requests] == [COLLECTION]
        stale = staleness(workspace)
        assert stale["source_documents"] == "STALE" and stale["insights"] == "STALE"
        assert nightly(project) == [COLLECTION]

        build(project, seed="2")
        added_run, added = last_run(project)
        assert added["parsed_documents"]["documents_parsed"] == 1
        assert added["parsed_documents"]["documents_reused"] == 1
        with duckdb.connect(str(project / "data" / "warehouse.duckdb"), read_only=True) as db:
            (new_texts,) = db.execute(
                """SELECT count(DISTINCT c.text_sha) FROM chunks c JOIN source_documents s USING (collection, doc_id)
                   WHERE c.profile = 'passage' AND s.file = ?""",
                [ADDED.name],
            ).fetchone()
        assert added["chunk_embeddings"]["chunks_embedded"] == new_texts > 0
        assert added["knowledge_triples"]["texts_reused"] > 0 < added["knowledge_triples"]["texts_embedded"]
        calls = ledger(project, added_run)
        for step in PER_PAPER_STEPS:
            earlier = [hit for asset, hit in ledger(project, first_run) if asset == step]
            hits = [hit for asset, hit in calls if asset == step]
            # Every call of the first build is answered from the cache; only the new paper's are made.
            assert earlier and sum(hits) == len(earlier) and len(hits) > len(earlier), step
        assert added["theme_graph"]["build"].startswith("built: upstream changed")
        # The build the schedule asked for leaves the digest of what it changed.
        (digest,) = (project / "data" / "reports" / COLLECTION / "changes").glob("*.md")
        assert f"({ADDED.name};" in digest.read_text() and "- added: **" in digest.read_text()
        assert all(value == "FRESH" for value in staleness(workspace).values())
        assert isinstance(nightly(project), dg.SkipReason)

        before = tables(project), files(project), ledger(project)
        build(project, seed="3")
        _, again = last_run(project)
        assert set(again) == set(added)
        built = sorted(step for step, values in again.items() if not values["build"].startswith("reused"))
        assert built == ["source_documents"]  # it scans the folder each time, and finds it as it was
        assert (tables(project), files(project), ledger(project)) == before
        assert all(value == "FRESH" for value in staleness(workspace).values())
