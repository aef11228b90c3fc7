"""SciPIP's summaries stage (Appendix A): every paper's summary, keywords, background and method,
knowing its citations."""

from __future__ import annotations

from dataclasses import dataclass, replace

from insight_assets.core.citations import citation_links
from insight_assets.core.embedding.models import one_torch_thread
from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.ingestion.ingest import load_documents
from insight_assets.core.methods.scipip import store, tasks
from insight_assets.core.methods.scipip.papers import PaperParts, PaperSummary, paper_parts, summarize_papers
from insight_assets.core.methods.scipip.retrieval import Library
from insight_assets.core.methods.scipip.schemas import BACKGROUND, SUMMARY
from insight_assets.core.methods.scipip.settings import SummariesSettings
from insight_assets.core.methods.scipip.tasks import SUMMARY_TASKS
from insight_assets.core.runtime.stage import CollectionScope, Handoff, NothingToDo, Stage
from insight_assets.core.runtime.stage_output import StageOutput, preview

SUMMARIES = "paper_summaries"
# The summarized papers' doc_id, title and method; each paper's summary and method as one text.
PAPERS = Handoff("scipip_papers", store.load_papers)
PAPER_TEXTS = Handoff("scipip_paper_texts", store.paper_texts)
# A dry run's summaries as retrieval searches them; a build's are read from LanceDB (``library``).
LIBRARY = Handoff("scipip_library")


@dataclass(frozen=True)
class Summarized:
    parts: list[PaperParts]  # each paper's sections as the summary read them
    summaries: list[PaperSummary]
    library: Library | None = None  # a dry run's: the summaries it priced, embedded


def summaries(scope: CollectionScope, settings: SummariesSettings) -> Summarized:
    """Every paper's summary, keywords, background and method (Appendix A), knowing its citations."""
    documents = [d for d in load_documents(scope.warehouse, scope.collection) if d.abstract or d.text.strip()]
    if not documents:
        raise NothingToDo("no parsed paper to summarize.")
    references: dict[str, list[str]] = {}
    for citing, cited in citation_links(scope.warehouse, scope.collection):
        references.setdefault(citing, []).append(cited)
    parts = [paper_parts(document) for document in documents]
    summarized = summarize_papers(scope.client, parts, references)
    if not any(summary.status == "ok" for summary in summarized):
        raise NothingToDo(f"no paper could be summarized: {summarized[0].error}")
    found = Summarized(parts, summarized)
    # Retrieval and the ideas read the summaries embedded: a dry run embeds the ones it priced, so
    # that it prices the later stages on them rather than on what an earlier build left, or nothing.
    return replace(found, library=_planned_library(scope, _usable(found))) if scope.estimating else found


def library(scope: CollectionScope) -> Library:
    """The summarized papers retrieval searches: in a dry run those it priced, else those the last
    build embedded (``IndexMissing`` before it did)."""
    planned = scope.handed.get(LIBRARY.name) if scope.estimating else None
    if planned is not None:
        return planned
    return store.load_library(scope.warehouse, scope.vectors_uri, scope.embedder, scope.collection)


def _usable(summarized: Summarized) -> list[PaperSummary]:
    return [s for s in summarized.summaries if s.status == "ok"]


def _embedded(scope: CollectionScope, usable: list[PaperSummary]):
    """The unit vectors of each paper's background, then of each paper's summary."""
    with one_torch_thread():
        return normalize_rows(
            scope.embedder.embed([s.background for s in usable] + [s.summary for s in usable])
        )


def _planned_library(scope: CollectionScope, usable: list[PaperSummary]) -> Library:
    vectors = _embedded(scope, usable)
    by_profile = {
        BACKGROUND: {s.doc_id: vectors[n] for n, s in enumerate(usable)},
        SUMMARY: {s.doc_id: vectors[len(usable) + n] for n, s in enumerate(usable)},
    }
    rows = [
        {"doc_id": s.doc_id, "keywords": s.keywords, "background": s.background}
        for s in sorted(usable, key=lambda s: s.doc_id)
    ]
    return store.library_of(scope.warehouse, scope.embedder, scope.collection, rows, by_profile)


def summarized_papers(summarized: Summarized) -> list[dict]:
    """The papers summarized, as ``store.load_papers`` reads them back."""
    return [{"doc_id": s.doc_id, "title": s.title, "method": s.method} for s in _usable(summarized)]


def summarized_texts(summarized: Summarized) -> dict[str, str]:
    """Each paper's summary and method as one text, as ``store.paper_texts`` reads them back."""
    return {s.doc_id: f"{s.summary} {s.method}" for s in summarized.summaries}


def output(scope: CollectionScope, settings: SummariesSettings, summarized: Summarized) -> StageOutput:
    """The papers' summaries, their backgrounds and summaries embedded into their vector table."""
    parts, found = summarized.parts, summarized.summaries
    usable = _usable(summarized)
    store.summary_vectors(scope.vectors_uri).replace(
        scope.collection,
        store.summary_vector_table(
            scope.collection, usable, _embedded(scope, usable), scope.embedder.variant
        ),
    )
    writer = scope.client.writer_label(tasks.SCIPIP_DIGEST)
    failed = [s for s in found if s.status != "ok"]
    sample = [
        {"title": s.title[:60], "keywords": "; ".join(s.keywords), "summary": s.summary[:200]}
        for s in usable[:8]
    ]
    return StageOutput(
        tables={"scipip_papers": store.papers_table(scope.collection, found, parts, writer)},
        metadata={
            "dagster/row_count": len(usable),
            "papers_failed": len(failed),
            "failures": "; ".join(f"{s.title[:40]}: {s.error}" for s in failed[:5]) or "none",
            "without_introduction_heading": sum(p.introduction_span is None for p in parts),
            "without_method_heading": sum(p.method_span is None for p in parts),
            "writer": writer,
            "sample": preview(sample, ["title", "keywords", "summary"]),
        },
    )


SUMMARIES_STAGE = Stage(
    SUMMARIES,
    "scipip",
    "Every paper as SciPIP's literature database holds it: keywords (at most 5 noun phrases), a "
    "one-sentence summary, a background (two motivations), ideas (three details), a concise method "
    "and its references in the collection; the background and summary embedded into LanceDB. "
    "Offline: extractive sentences and key phrases, labelled.",
    SummariesSettings,
    reads=("parsed_documents", "citations"),
    run=summaries,
    hands=(
        PAPERS.of(summarized_papers),
        PAPER_TEXTS.of(summarized_texts),
        LIBRARY.of(lambda summarized: summarized.library),
    ),
    output=output,
    tasks=SUMMARY_TASKS,
    kinds=("duckdb", "lancedb"),
    embedder=True,
    vectors=store.summary_vectors,
)
