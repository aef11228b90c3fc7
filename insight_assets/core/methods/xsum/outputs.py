"""What XSum's stages keep (see ``core/runtime/stage_output.py``): the tables each writes, and its report."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from insight_assets.core.page.headlines import Headline, headline_table, measured_note, played_offline
from insight_assets.core.runtime.stage_output import (
    CheckOutcome,
    Json,
    Markdown,
    StageOutput,
    judge_note,
    preview,
    skipped,
    standin_note,
    table,
    write_report,
)
from insight_assets.core.startup.lazy import pa

from ...citations import citation_links
from . import report, scores
from . import tasks as xsum_tasks
from .load import USER_TARGETS_FILE, why_no_evaluation_targets
from .runs import summary_citations_valid
from .schemas import (
    ABSTAINED,
    ABSTRACTS_ONLY,
    ANSWERED,
    FAILED,
    PIPELINE_1,
    PIPELINE_2,
    PLAIN_RAG,
    TARGET_KINDS,
    TRUNCATED,
    XSUM,
)
from .store import summary_costs

if TYPE_CHECKING:
    from insight_assets.core.runtime.stage import CollectionScope

    from .settings import AnswersSettings, QuestionsSettings, ScoresSettings, SummariesSettings
    from .stages import Answered, Asked, Scored, Summarized

TARGETS_READABLE = "summary_targets_readable"
CITATIONS_IN_TARGET = "summary_citations_in_target"
NOT_TRUNCATED = "summaries_not_truncated"
# The columns of the score tables, in the metadata, the report and the page.
SCORE_TABLE_COLUMNS = ["method", "targets", *scores.SCORE_COLUMNS]


def questions(scope: CollectionScope, settings: QuestionsSettings, asked: Asked) -> StageOutput:
    papers, outcome = asked.papers, asked.outcome
    writer = scope.client.writer_label(xsum_tasks.XSUM_QUESTIONS)
    by_doc = {paper.doc_id: paper for paper in papers}
    rows = [
        {
            "doc_id": q.doc_id,
            "question_id": q.question_id,
            "position": q.position,
            "question": q.question,
            "abstract_source": by_doc[q.doc_id].abstract_source,
            "status": "ok",
            "writer": writer,
        }
        for q in outcome.questions
    ]
    rows += [
        {"doc_id": doc_id, "status": "failed", "error": error, "writer": writer}
        for doc_id, error in outcome.failures.items()
    ]
    fallbacks = sorted(p.title for p in papers if p.abstract_source != "abstract")
    return StageOutput(
        tables={"xsum_questions": table(scope.collection, rows)},
        metadata={
            "dagster/row_count": len(outcome.questions),
            "papers": len(papers),
            "papers_failed": len(outcome.failures),
            "abstract_fallbacks": Json(fallbacks),
            "preview": preview([{"question": q.question} for q in outcome.questions], ["question"]),
        },
    )


def answers(scope: CollectionScope, settings: AnswersSettings, answered: Answered) -> StageOutput:
    targets, problems, found = answered.targets, answered.problems, answered.answers
    writer = scope.client.writer_label(xsum_tasks.XSUM_ANSWER)
    left_out = {}
    if not any(t.is_evaluation for t in targets):
        links = citation_links(scope.warehouse, scope.collection)
        left_out["evaluation targets"] = why_no_evaluation_targets(links, settings.min_cited_for_evaluation)
    return StageOutput(
        tables=_answer_tables(scope.collection, targets, problems, found, writer),
        metadata={**_answers_metadata(targets, problems, found, settings), **skipped(left_out)},
        checks=[
            CheckOutcome(
                TARGETS_READABLE,
                passed=not problems,
                warning=True,
                metadata={"bad_lines": len(problems), "file": str(Path(scope.folder) / USER_TARGETS_FILE)},
            )
        ],
    )


def _answers_metadata(targets, problems, found, settings: AnswersSettings) -> dict:
    """Targets per kind and listed, answers per status, the retrieval used, the summaries.jsonl problems."""
    counts = {status: sum(a.status == status for a in found) for status in (ANSWERED, ABSTAINED, FAILED)}
    return {
        "dagster/row_count": len(found),
        "targets": Json({kind: sum(t.kind == kind for t in targets) for kind in TARGET_KINDS}),
        "answers": Json(counts),
        "retrieval": f"{settings.retrieval_mode} top {settings.candidates} -> {settings.reranker} top {settings.top_n}, scope {settings.retrieval_scope}",
        "target_list": preview(
            [{"kind": t.kind, "topic": t.topic, "papers": len(t.doc_ids)} for t in targets],
            ["kind", "topic", "papers"],
        ),
        "summary_target_problems": preview(
            [p.__dict__ for p in problems], ["line", "message"], empty="None."
        ),
    }


def _answer_tables(collection, targets, problems, found, writer) -> dict[str, pa.Table]:
    return {
        "xsum_targets": table(
            collection,
            [
                {
                    "target_id": t.target_id,
                    "kind": t.kind,
                    "topic": t.topic,
                    "doc_ids": list(t.doc_ids),
                    "reference": t.reference or None,
                    "reference_doc_id": t.reference_doc_id,
                    "reference_section": t.reference_section or None,
                }
                for t in targets
            ],
        ),
        "xsum_target_problems": table(
            collection,
            [{"line": p.line, "message": p.message} for p in problems],
            schema=pa.schema([("collection", pa.string()), ("line", pa.int32()), ("message", pa.string())]),
        ),
        "xsum_answers": table(
            collection,
            [
                {
                    "target_id": a.target_id,
                    "question_id": a.question_id,
                    "doc_id": a.doc_id,
                    "status": a.status,
                    "answer": a.text or None,
                    "cited_chunk_ids": list(a.cited),
                    "passage_chunk_ids": list(a.passages),
                    "scope_doc_ids": list(a.scope_doc_ids),
                    "error": a.error,
                    "writer": writer,
                }
                for a in found
            ],
        ),
    }


def summaries(scope: CollectionScope, settings: SummariesSettings, summarized: Summarized) -> StageOutput:
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


def scores_output(scope: CollectionScope, settings: ScoresSettings, result: Scored) -> StageOutput:
    """§4.2's scores, their tables and chart, and the report with its headline."""
    targets, written, scored, client = result.targets, result.summaries, result.scored, scope.client
    judge = client.writer_label(xsum_tasks.GEVAL_COVERAGE)
    mode = scores.geval_mode(client)
    tables = report.score_tables(scored)
    files = _write_scores_report(scope, targets, written, scored, tables, judge, mode)
    no_evaluation = {
        "scores against related-work sections": "no evaluation target (see `skipped` of xsum_answers)."
    }
    return StageOutput(
        tables={"xsum_scores": _score_table(scope.collection, scored, judge)},
        metadata={
            "dagster/row_count": len(scored),
            "evaluation_targets": sum(t.is_evaluation for t in targets),
            **skipped({} if any(t.is_evaluation for t in targets) else no_evaluation),
            **{f"scores_vs_{kind}": preview(rows, SCORE_TABLE_COLUMNS) for kind, rows in tables.items()},
            "judge": judge,
            "geval": mode,
            **files,
        },
    )


def _score_table(collection, scored, judge) -> pa.Table:
    return table(
        collection,
        [
            {
                "target_id": s.target_id,
                "method": s.method,
                "reference_kind": s.reference_kind,
                **s.scores,
                "judge": judge,
                "errors": list(s.errors),
            }
            for s in scored
        ],
    )


def _write_scores_report(scope, targets, written, scored, tables, judge, mode) -> dict:
    """The markdown report with its chart, and the headline the collection's page shows."""
    costs = report.cost_table(summary_costs(scope.warehouse, scope.collection))
    topics = {t.target_id: t.topic for t in targets}
    offline_judge = played_offline(judge)
    ranked_by = report.RANKED_BY_OFFLINE if offline_judge else report.RANKED_BY
    examples = report.best_and_worst(
        scored,
        {(s.target_id, s.method): {"topic": topics[s.target_id], "rendered": s.rendered} for s in written},
        ranked_by,
    )
    summary_writers = scope.warehouse.writers("xsum_summaries", scope.collection)
    roles = {
        "question writer": scope.warehouse.writers("xsum_questions", scope.collection),
        "answerer": scope.warehouse.writers("xsum_answers", scope.collection),
        "summary writer": summary_writers,
        "judge": judge,
    }
    notes = _score_notes(judge, mode, summary_writers, roles)
    # The page shows no placeholder: the offline judge's scores stay in the report.
    shown = [c for c in SCORE_TABLE_COLUMNS if not (offline_judge and c in scores.JUDGED_COLUMNS)]
    return write_report(
        scope,
        "xsum_report.md",
        report.render_report(scope.collection, tables, examples, notes, costs, ranked_by),
        report.CHART_FILE,
        report.render_chart(tables),
        "mean scores per method",
        Headline(
            tables=(
                *(
                    headline_table(f"Mean scores per method against the {kind}", rows, shown)
                    for kind, rows in tables.items()
                ),
                headline_table("Cost per target of the summary step", costs, report.COST_COLUMNS),
            ),
            notes=tuple(notes),
            writer=summary_writers,
            judge=judge,
        ),
    )


def _score_notes(judge: str, mode: str, summary_writers: str, roles: dict[str, str]) -> list[str]:
    """What the report says first: what is measured and what stands in, who wrote and judged, and
    how each score and baseline was made."""
    measured = [c for c in scores.SCORE_COLUMNS if c not in scores.JUDGED_COLUMNS]
    return [
        measured_note(
            [f"{', '.join(measured)} (against the reference)", "costs"],
            scores.JUDGED_COLUMNS,
            "the offline judge's lexical stand-ins" if played_offline(judge) else None,
        ),
        judge_note(
            judge, summary_writers, "G-Eval and CheckEval here are lexical stand-ins, not a model's judgement"
        ),
        *filter(None, [standin_note(roles)]),
        (
            f"G-Eval: {mode}, the expectation over the score tokens 1-5 of the judge's evaluation form"
            if mode == scores.WEIGHTED
            else f"G-Eval: {mode}, the judge's written score (its provider gives no token probabilities)"
        ),
        "CheckEval: the checklist built from the reference, refined (CheckEval's refinement step), then answered per summary",
        (
            "pipeline_1: every chunk of the target's papers ranked against its title by late interaction "
            "(MaxSim over all-MiniLM-L6-v2 token vectors; the paper's monoT5-3B is not available), top 20 "
            "summarised; pipeline_2: 100 chunks by dense retrieval on the title, an LLM re-rank down to as "
            "many as XSum's editor was handed, summarised; both with the plain-RAG writer and word budget"
        ),
        "semantic_recall: each reference sentence's best cosine with a summary sentence (the embedder, not BERTScore)",
        "ref_*: the papers a summary cites against the target's papers",
    ]
