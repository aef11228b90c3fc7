"""Crash and resume: a build killed with SIGKILL in the middle of a step leaves nothing half-written,
and the rerun pays only for what was not done, ending with the tables an uninterrupted build makes.

The killed build runs in a process of its own (``build_worker``); the test watches what it has done
(requests the fake server received, answers in the response cache, rows in the call ledger) and
kills it mid-step. The rerun and an uninterrupted reference build run in this process.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import dagster as dg
import pytest

from insight_assets.core.llm import CallLedger, ResponseCache
from insight_assets.core.storage.stores import warehouse_tables
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource
from insight_assets.defs.runs import ALL_ASSETS, INGESTION_ASSETS, materialize_collection
from insight_assets_tests.conftest import DEMO_PDFS_BY_SIZE, add_collection, copy_stores
from insight_assets_tests.defs.helpers import assets_up_to
from insight_assets_tests.fake_model_server import FakeModelServer, Received, Reply

# Each test builds in a process of its own and kills it: end-to-end, and long.
pytestmark = pytest.mark.long

PDFS = DEMO_PDFS_BY_SIZE
COLLECTION = "crash"
REPO = Path(__file__).resolve().parents[2]


def make_storage(root: Path) -> StorageResource:
    (root / "collections").mkdir(parents=True)
    return storage_at(root)


def storage_at(root: Path) -> StorageResource:
    return StorageResource(
        collections_root=str(root / "collections"),
        warehouse_path=str(root / "warehouse.duckdb"),
        lancedb_uri=str(root / "lancedb"),
        reports_dir=str(root / "reports"),
        adapters_dir=str(root / "adapters"),
    )


def assets_named(*names: str) -> list:
    return [asset for asset in ALL_ASSETS if asset.key.to_user_string() in names]


def build_and_kill(arguments: dict, done_enough: Callable[[], bool], timeout_s: float = 120) -> None:
    """Start a build in its own process and SIGKILL it as soon as ``done_enough()``; fail if the
    build ends before that (it was not killed in the middle of anything)."""
    worker = subprocess.Popen(
        [sys.executable, "-m", "insight_assets_tests.defs.build_worker", json.dumps(arguments)],
        cwd=REPO,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + timeout_s
    try:
        while not done_enough():
            if worker.poll() is not None:
                pytest.fail(
                    f"the build ended (exit {worker.returncode}) before it was killed: {worker.stderr.read()[-2000:]}"
                )
            if time.monotonic() > deadline:
                pytest.fail("the build never reached the point where it was to be killed")
            time.sleep(0.005)
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
    finally:
        if worker.poll() is None:
            worker.kill()
        worker.stderr.close()
    assert worker.returncode == -signal.SIGKILL


def worker_arguments(storage: StorageResource, embedder: dict, llm: dict | None, assets: list[str]) -> dict:
    return {
        "storage": storage.model_dump(),
        "embedder": embedder,
        "llm": llm,
        "collection": COLLECTION,
        "assets": assets,
    }


# What records builds rather than what they made: run ids, times, reports (the kept builds and theme
# graphs are the builds' rows again, with those).
BUILD_RECORDS = ("asset_builds", "source_states", "kept_builds", "kept_build_tables")


def warehouse_snapshot(storage: StorageResource) -> dict[str, list[str]]:
    """Every table's rows for the collection, sorted: what must match an uninterrupted build (the
    build records, with their run ids and times, aside, and so the source's state as the build read
    it (where the files are, their times) and the wall seconds a method took)."""
    snapshot = {}
    with storage.warehouse.session() as db:
        for table in warehouse_tables():
            if table not in BUILD_RECORDS:
                rows = db.rows(f"SELECT * FROM {table} WHERE collection = ?", [COLLECTION])
                kept = [{k: v for k, v in row.items() if not k.endswith("seconds")} for row in rows]
                snapshot[table] = sorted(json.dumps(row, sort_keys=True, default=str) for row in kept)
    return snapshot


def vector_snapshot(storage: StorageResource) -> list[tuple]:
    table = storage.vectors.read(COLLECTION)
    if table is None:
        return []
    return sorted(
        (
            row["profile"],
            row["chunk_id"],
            row["text_sha"],
            row["variant"],
            row["pooled_from"],
            tuple(row["vector"]),
        )
        for row in table.to_pylist()
    )


def assert_no_duplicates(storage: StorageResource) -> None:
    with storage.warehouse.session() as db:
        for table in warehouse_tables():
            total = db.rows(f"SELECT count(*) AS n FROM {table} WHERE collection = ?", [COLLECTION])[0]["n"]
            distinct = db.rows(
                f"SELECT count(*) AS n FROM (SELECT DISTINCT * FROM {table} WHERE collection = ?)",
                [COLLECTION],
            )[0]["n"]
            assert total == distinct, f"{table} has duplicate rows"
    keys = [(profile, chunk_id) for profile, chunk_id, *_ in vector_snapshot(storage)]
    assert len(keys) == len(set(keys)), "the vector table has duplicate rows"


def built(storage: StorageResource) -> dict[str, str]:
    rows = storage.warehouse.rows("SELECT asset, run_id FROM asset_builds WHERE collection = ?", [COLLECTION])
    return {row["asset"]: row["run_id"] for row in rows}


def test_a_build_killed_while_embedding_resumes_to_the_same_tables(tmp_path):
    server = FakeModelServer().start()
    server.default = Reply("", delay_s=0.15)  # every embedding request answered, slowly
    embedder = {
        "provider": "openai-compatible",
        "model": "nomic-embed-text",
        "base_url": f"{server.url}/v1",
        "batch_size": 8,
    }
    storage = make_storage(tmp_path / "resumed")
    try:
        with dg.DagsterInstance.ephemeral() as instance:
            add_collection(storage, COLLECTION, PDFS[:1])
            first = materialize_collection(instance, storage, EmbedderResource(**embedder), COLLECTION)
            vectors_before, embedded_by = vector_snapshot(storage), built(storage)["chunk_embeddings"]
            table_version = storage.vectors.db.open_table(storage.vectors.table_name(COLLECTION)).version

            # A second paper arrives; its build is killed once a few of its batches were sent.
            add_collection(storage, COLLECTION, PDFS[1:2])
            sent = len(server.requests)
            build_and_kill(
                worker_arguments(
                    storage, embedder, None, [asset.key.to_user_string() for asset in INGESTION_ASSETS]
                ),
                lambda: len(server.requests) >= sent + 3,
            )

            # Nothing half-written: the vector table is still the whole earlier one, the steps before
            # finished their writes, and the interrupted step left no build record of its own.
            assert vector_snapshot(storage) == vectors_before
            assert (
                storage.vectors.db.open_table(storage.vectors.table_name(COLLECTION)).version == table_version
            )
            assert built(storage)["chunk_embeddings"] == embedded_by == first.run_id
            assert storage.warehouse.rows("SELECT count(*) AS n FROM parsed_documents")[0]["n"] == 2
            assert_no_duplicates(storage)

            server.default = Reply("")  # the same vectors, without the pause that made room for the kill

            resumed = materialize_collection(instance, storage, EmbedderResource(**embedder), COLLECTION)
            assert resumed.success
        assert_no_duplicates(storage)

        reference = make_storage(tmp_path / "reference")
        with dg.DagsterInstance.ephemeral() as instance:
            add_collection(reference, COLLECTION, PDFS[:2])
            materialize_collection(instance, reference, EmbedderResource(**embedder), COLLECTION)
    finally:
        server.stop()
    assert warehouse_snapshot(storage) == warehouse_snapshot(reference)
    assert vector_snapshot(storage) == vector_snapshot(reference)


def _compression_reply(request: Received) -> Reply:
    """A hosted model's valid compression, different for each paper, after a pause."""
    digest = hashlib.sha256(request.last_user_text().encode()).hexdigest()[:8]
    answer = {
        "main_topics": [f"topic {digest}"],
        "contributions": [f"A method, {digest}, that embeds scientific documents."],
        "conclusions": ["Citation signals improve document embeddings."],
        "key_findings": ["The embeddings outperform the baselines."],
    }
    return Reply(json.dumps(answer), delay_s=0.4)


def hosted(server: FakeModelServer, data_dir: Path) -> dict:
    return {
        "provider": "openai",
        "model": "gpt-4o-mini",
        "base_url": f"{server.url}/v1",
        "api_key": "test-key",
        "max_retries": 0,
        "max_concurrency": 1,
        "data_dir": str(data_dir),
    }


def test_a_build_killed_while_calling_a_model_pays_only_for_the_rest(tmp_path, hashing_embedder):
    server = FakeModelServer().start()
    server.responder = _compression_reply
    storage, data_dir = make_storage(tmp_path / "resumed"), tmp_path / "resumed" / "data"
    papers = PDFS[:3]
    try:
        with dg.DagsterInstance.ephemeral() as instance:
            add_collection(storage, COLLECTION, papers)
            materialize_collection(instance, storage, hashing_embedder, COLLECTION)  # ingestion
            cache = ResponseCache.in_data_dir(data_dir)
            build_and_kill(
                worker_arguments(
                    storage, {"provider": "hashing"}, hosted(server, data_dir), ["compressed_documents"]
                ),
                lambda: len(cache) >= 2,  # two answers bought and cached, the third under way
            )
            cached = len(cache)
            asked_before_kill = [request.last_user_text() for request in server.requests]
            assert 2 <= cached < len(papers)
            # Nothing half-written: the step writes its rows only when every paper is done.
            assert not storage.warehouse.rows(
                "SELECT 1 FROM compressed_documents WHERE collection = ?", [COLLECTION]
            )
            assert "compressed_documents" not in built(storage)

            server.requests.clear()
            resumed = materialize_collection(
                instance,
                storage,
                hashing_embedder,
                COLLECTION,
                llm=LLMResource(**hosted(server, data_dir)),
                assets=assets_named("compressed_documents"),
            )
        assert_no_duplicates(storage)
        # The ledger: the answers bought before the kill came from the cache, the rest from the provider.
        rows = [
            row
            for row in CallLedger.in_data_dir(data_dir).rows(asset="compressed_documents")
            if row.run_id == resumed.run_id
        ]
        assert sum(row.cache_hit for row in rows) == cached
        assert sum(not row.cache_hit for row in rows) == len(papers) - cached == len(server.requests)
        asked_again = {request.last_user_text() for request in server.requests}
        assert not asked_again & set(asked_before_kill[:cached])

        reference = make_storage(tmp_path / "reference")
        with dg.DagsterInstance.ephemeral() as instance:
            add_collection(reference, COLLECTION, papers)
            materialize_collection(
                instance,
                reference,
                hashing_embedder,
                COLLECTION,
                llm=LLMResource(**hosted(server, tmp_path / "reference" / "data")),
                assets=[*INGESTION_ASSETS, *assets_named("compressed_documents")],
            )
    finally:
        server.stop()
    assert warehouse_snapshot(storage) == warehouse_snapshot(reference)


def test_an_offline_build_killed_while_finding_insights_resumes_to_the_same_tables(
    tmp_path, hashing_embedder
):
    # The insights and what they are built from; the other methods' assets are not what is killed.
    chain = [asset.key.to_user_string() for asset in assets_up_to("insights")]
    upstream = [name for name in chain if name != "insights"]
    storage, data_dir = make_storage(tmp_path / "resumed"), tmp_path / "resumed" / "data"
    ledger = CallLedger.in_data_dir(data_dir)
    with dg.DagsterInstance.ephemeral() as instance:
        add_collection(storage, COLLECTION, PDFS[:2])
        llm = LLMResource(data_dir=str(data_dir))
        materialize_collection(
            instance, storage, hashing_embedder, COLLECTION, llm=llm, assets=assets_named(*upstream)
        )
        # The reference: the same stores, the insights built without interruption.
        copy_stores(tmp_path / "resumed", tmp_path / "reference")
        reference = storage_at(tmp_path / "reference")
        reference_llm = LLMResource(data_dir=str(tmp_path / "reference" / "data"))
        materialize_collection(
            instance,
            reference,
            hashing_embedder,
            COLLECTION,
            llm=reference_llm,
            assets=assets_named("insights"),
        )
        calls_in_full = len(CallLedger.in_data_dir(tmp_path / "reference" / "data").rows(asset="insights"))

        build_and_kill(
            worker_arguments(storage, {"provider": "hashing"}, {"data_dir": str(data_dir)}, ["insights"]),
            lambda: len(ledger.rows(asset="insights")) >= 3,
        )
        assert len(ledger.rows(asset="insights")) < calls_in_full  # killed in the middle of the step
        assert not storage.warehouse.rows("SELECT 1 FROM insights WHERE collection = ?", [COLLECTION])
        assert "insights" not in built(storage)
        assert_no_duplicates(storage)

        resumed = materialize_collection(
            instance, storage, hashing_embedder, COLLECTION, llm=llm, assets=assets_named("insights")
        )
        assert resumed.success
    assert_no_duplicates(storage)
    assert warehouse_snapshot(storage) == warehouse_snapshot(reference)
