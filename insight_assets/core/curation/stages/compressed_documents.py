"""The curation's compression stage: each parsed paper compressed to its topics, contributions and
findings."""

from __future__ import annotations

from insight_assets.core.curation.compression import (
    COMPRESS_DOCUMENT,
    CompressionOutcome,
    CompressionSettings,
    compress_documents,
    papers_to_compress,
)
from insight_assets.core.curation.tables import compressed_table, load_compressed
from insight_assets.core.ingestion import ingest
from insight_assets.core.runtime.stage import Check, CollectionScope, Handoff, NothingToDo, Stage
from insight_assets.core.runtime.stage_output import CheckOutcome, StageOutput, preview, stop_if_over_budget

COMPRESSED = Handoff("compressed_documents", load_compressed)


def compress(scope: CollectionScope, settings: CompressionSettings) -> CompressionOutcome:
    """Each parsed paper compressed to its topics, contributions and findings."""
    papers = papers_to_compress(ingest.load_documents(scope.warehouse, scope.collection))
    if not papers:
        raise NothingToDo("no parsed documents to compress (see `parsed_documents`' problems).")
    return compress_documents(scope.client, papers, settings)


EVERY_DOCUMENT_COMPRESSED = "every_document_compressed"


def output(scope: CollectionScope, settings: CompressionSettings, outcome: CompressionOutcome) -> StageOutput:
    stop_if_over_budget(outcome.budget_error)
    writer = scope.client.writer_label(COMPRESS_DOCUMENT)
    rows = [
        {
            "title": doc.title[:80],
            "tokens": doc.tokens,
            "source_tokens": doc.source_tokens,
            "topics": "; ".join(doc.main_topics),
        }
        for doc in outcome.compressed
    ]
    failures = [{"document": failure.item, "error": failure.error} for failure in outcome.failures]
    source_tokens = sum(doc.source_tokens for doc in outcome.compressed)
    tokens = sum(doc.tokens for doc in outcome.compressed)
    return StageOutput(
        tables={"compressed_documents": compressed_table(scope.collection, outcome, writer)},
        metadata={
            "dagster/row_count": len(outcome.compressed),
            "documents_failed": len(outcome.failures),
            "compressed_tokens": tokens,
            "source_tokens": source_tokens,
            "compression_ratio": round(tokens / source_tokens, 4) if source_tokens else 0.0,
            "preview": preview(rows, ["title", "tokens", "source_tokens", "topics"], empty="No documents."),
            "failures": preview(failures, ["document", "error"], empty="None."),
        },
        checks=[
            CheckOutcome(
                EVERY_DOCUMENT_COMPRESSED,
                passed=not outcome.failures,
                warning=True,
                metadata={"failed": len(outcome.failures)},
            )
        ],
    )


COMPRESS_STAGE = Stage(
    COMPRESSED.name,
    "curation",
    "Each paper's main topics, contributions, conclusions and key findings, without references, "
    "formatting or boilerplate: compact enough that several papers fit in one prompt.",
    CompressionSettings,
    reads=("parsed_documents",),
    run=compress,
    hands=(COMPRESSED.of(lambda outcome: outcome.compressed),),
    output=output,
    tasks=(COMPRESS_DOCUMENT,),
    checks=(Check(EVERY_DOCUMENT_COMPRESSED),),
)
