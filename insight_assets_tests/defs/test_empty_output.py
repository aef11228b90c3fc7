"""Empty output is a result, not a failure: a stage whose model returns nothing usable (every reply
prose, no JSON closed, as the small local model sometimes writes) keeps zero rows, records each
failed call, and warns through its check with the reason; the step below says it had nothing to
read instead of reporting an empty success."""

from __future__ import annotations

import sqlite3

from insight_assets.core.llm.ledger import DEFAULT_LEDGER_FILE
from insight_assets.defs.catalog import assets_named
from insight_assets.defs.citations.assets import citations
from insight_assets.defs.ingestion.assets import chunks, parsed_documents, source_documents
from insight_assets.defs.ingestion.embeddings import chunk_embeddings
from insight_assets_tests.conftest import DEMO_PDFS_BY_SIZE, add_collection
from insight_assets_tests.defs.helpers import check, hosted_llm, materialize_collection, metadata
from insight_assets_tests.fake_model_server import FakeModelServer, Received, Reply

UPSTREAM = [source_documents, parsed_documents, chunks, chunk_embeddings, citations]


def prose_only(request: Received) -> Reply:
    """A model that answers every prompt in a sentence and never closes a JSON object."""
    return Reply("Here are the triples I found in these sentences: the authors propose a method")


def test_a_model_that_returns_nothing_usable_leaves_zero_rows_a_warning_and_a_reason_below(
    instance, storage, hashing_embedder, tmp_path
):
    add_collection(storage, "demo", DEMO_PDFS_BY_SIZE[:2])
    server = FakeModelServer().start()
    server.responder = prose_only
    try:
        result = materialize_collection(
            instance,
            storage,
            hashing_embedder,
            "demo",
            llm=hosted_llm(server, tmp_path),
            assets=[*UPSTREAM, *assets_named("knowledge_triples", "insight_rag_benchmark")],
            run_config={"ops": {"knowledge_triples": {"config": {"max_chunks_per_paper": 2}}}},
        )
    finally:
        server.stop()

    assert result.success  # nothing usable is a result: the run goes on
    triples = metadata(result, "knowledge_triples")
    assert triples["dagster/row_count"] == 0 and triples["sentences"] > 0  # the sentences are still indexed
    assert triples["chunks_failed"] == triples["chunks_read"] > 0
    warning = check(result, "triples_found")
    assert not warning.passed and warning.severity.value == "WARN"
    assert "found no triple" in warning.description
    assert storage.warehouse.rows(
        "SELECT count(*) AS n FROM knowledge_triples WHERE collection = 'demo'"
    ) == [{"n": 0}]
    # Each failed call is on record with its reason.
    with sqlite3.connect(tmp_path / "data" / DEFAULT_LEDGER_FILE) as ledger:
        failed = ledger.execute(
            "SELECT count(*) FROM calls WHERE asset = 'knowledge_triples' AND error IS NOT NULL"
        ).fetchone()[0]
    assert failed >= triples["chunks_read"]
    # The step below says it had nothing to read.
    skipped = str(metadata(result, "insight_rag_benchmark")["skipped"])
    assert "no triple to ask about: `knowledge_triples` kept none" in skipped
    below = check(result, "benchmark_has_items")  # two papers: no matching pair either
    assert not below.passed and "`knowledge_triples` kept no triple to ask about" in below.description
