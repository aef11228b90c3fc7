"""XSum's summaries stage (§3.5): the editor's summary of each target from its answers, and the
baselines' beside it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.methods.xsum import PROFILE, load, store
from insight_assets.core.methods.xsum import tasks as xsum_tasks
from insight_assets.core.methods.xsum.runs import summary_citations_valid
from insight_assets.core.methods.xsum.schemas import (
    ABSTRACTS_ONLY,
    PIPELINE_1,
    PIPELINE_2,
    PLAIN_RAG,
    TRUNCATED,
    XSUM,
    SummaryTarget,
)
from insight_assets.core.methods.xsum.settings import SummariesSettings
from insight_assets.core.methods.xsum.stages.answers import ANSWERS, TARGETS
from insight_assets.core.methods.xsum.stages.questions import QUESTIONS
from insight_assets.core.methods.xsum.summaries import WrittenSummaries, summarize_targets
from insight_assets.core.retrieval.citing import Source, load_sources
from insight_assets.core.runtime.stage import Check, CollectionScope, Handoff, NothingToDo, Stage
from insight_assets.core.runtime.stage_output import CheckOutcome, Json, Markdown, StageOutput, preview, table
from insight_assets.core.startup.lazy import pa

if TYPE_CHECKING:
    from insight_assets.core.retrieval import Retriever


SUMMARIES = Handoff("xsum_summaries", store.load_written_summaries)


@dataclass(frozen=True)
class Summarized:
    targets: list[SummaryTarget]
    sources: dict[str, Source]  # the collection's XSum chunks by id
    written: WrittenSummaries


def summaries(scope: CollectionScope, settings: SummariesSettings) -> Summarized:
    """§3.5: the editor's summary of each target from its answers, and the baselines' beside it."""
    warehouse, collection = scope.warehouse, scope.collection
    baselines = settings if settings.baselines else None
    targets = scope.upstream(TARGETS)
    if not targets:
        raise NothingToDo("no summary targets: `xsum_answers` found none.")
    answered = scope.upstream(ANSWERS)
    asked = scope.upstream(QUESTIONS)
    sources = load_sources(warehouse, collection, PROFILE)
    papers = {paper.doc_id: paper for paper in load.load_papers(warehouse, collection)}
    retriever: Retriever | None = scope.retriever(PROFILE) if baselines else None
    written = summarize_targets(
        scope.client,
        targets,
        answered,
        {q.question_id: q.question for q in asked},
        sources,
        baselines=baselines,
        retriever=retriever,
        papers=papers,
    )
    if not any(record.text for record in written.records):
        first = written.records[0].error if written.records else "no targets"
        raise NothingToDo(f"no summary was written: {first}")
    return Summarized(targets, sources, written)


CITATIONS_IN_TARGET = "summary_citations_in_target"
NOT_TRUNCATED = "summaries_not_truncated"


def output(scope: CollectionScope, settings: SummariesSettings, summarized: Summarized) -> StageOutput:
    targets, sources, client = summarized.targets, summarized.sources, scope.client
    records, costs = summarized.written.records, summarized.written.costs
    written_by = {
        XSUM: client.writer_label(xsum_tasks.XSUM_EDITOR),
        PIPELINE_1: client.writer_label(xsum_tasks.XSUM_TOPIC_SUMMARY),
        PIPELINE_2: client.writer_label(xsum_tasks.XSUM_TOPIC_SUMMARY),
        PLAIN_RAG: client.writer_label(xsum_tasks.XSUM_TOPIC_SUMMARY),
        ABSTRACTS_ONLY: client.writer_label(xsum_tasks.XSUM_EDITOR),
    }
    per_target = {m: c.per(len(targets)) for m, c in costs.items()}
    chunk_docs = {cid: source.doc_id for cid, source in sources.items()}
    problems = summary_citations_valid(records, {t.target_id: t for t in targets}, chunk_docs)
    return StageOutput(
        tables={"xsum_summaries": _summary_table(scope.collection, records, written_by, per_target)},
        metadata=_summaries_metadata(records, targets),
        checks=_summaries_checks(records, targets, problems),
    )


def _summaries_metadata(records, targets) -> dict:
    """Summaries per method and status, an example of XSum's, and the failures with their reasons."""
    topics = {t.target_id: t.topic for t in targets}
    status_counts = {
        method: {
            status: sum(r.method == method and r.status == status for r in records)
            for status in {r.status for r in records}
        }
        for method in dict.fromkeys(r.method for r in records)
    }
    example = next((r for r in records if r.method == XSUM and r.text), None)
    failures = [
        {"method": r.method, "topic": topics[r.target_id], "status": r.status, "error": r.error}
        for r in records
        if r.error
    ]
    return {
        "dagster/row_count": sum(bool(r.text) for r in records),
        "summaries": Json(status_counts),
        "citations_dropped_by_editor": sum(len(r.dropped) for r in records if r.method == XSUM),
        "example": Markdown(
            f"**{topics[example.target_id]}**\n\n{example.rendered}" if example else "No XSum summary."
        ),
        "failures": preview(failures, ["method", "topic", "status", "error"], empty="None."),
    }


def _summaries_checks(records, targets, problems: list[str]) -> list[CheckOutcome]:
    topics = {t.target_id: t.topic for t in targets}
    truncated = [r for r in records if r.status == TRUNCATED]
    return [
        CheckOutcome(
            CITATIONS_IN_TARGET,
            passed=not problems,
            metadata={
                "summaries_checked": sum(bool(r.text) for r in records),
                "problems": "; ".join(problems[:10]) or "none",
            },
        ),
        CheckOutcome(
            NOT_TRUNCATED,
            passed=not truncated,
            metadata={
                "truncated": "; ".join(f"{r.method}: {topics[r.target_id]}" for r in truncated) or "none"
            },
        ),
    ]


def _summary_table(collection, records, written_by, costs) -> pa.Table:
    """The summaries, each with its method's cost per target of this step (``costs``)."""
    return table(
        collection,
        [
            {
                "target_id": r.target_id,
                "method": r.method,
                "status": r.status,
                "summary": r.text or None,
                "rendered": r.rendered or None,
                "cited_chunk_ids": list(r.cited),
                "dropped_chunk_ids": list(r.dropped),
                "finish_reason": r.finish_reason,
                "answers_used": r.answers_used,
                "error": r.error,
                "writer": written_by[r.method],
                **costs[r.method],
            }
            for r in records
        ],
    )


SUMMARIES_STAGE = Stage(
    SUMMARIES.name,
    "xsum",
    "One summary per target by the editor from its answers, citations kept as chunk ids and "
    "rendered as (Title, pp. a-b); with the baselines beside it: SurveySum's Pipeline 1 and "
    "Pipeline 2 (the paper's Table 1), plain RAG and abstracts only.",
    SummariesSettings,
    reads=(ANSWERS.name,),
    run=summaries,
    hands=(SUMMARIES.of(lambda done: [record for record in done.written.records if record.text]),),
    output=output,
    tasks=(xsum_tasks.XSUM_EDITOR, xsum_tasks.XSUM_TOPIC_SUMMARY),
    checks=(
        Check(
            CITATIONS_IN_TARGET,
            "Every citation of every summary is a chunk its writer was given, of one of its target's "
            "papers; an invented alias, or a writer rejected for citing sources it was not given, fails it.",
        ),
        Check(
            NOT_TRUNCATED,
            "No summary was cut off at max_tokens (after one retry with twice the room).",
        ),
    ),
    embedder=True,
)
