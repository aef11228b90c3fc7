"""XSum's scores stage (§4.2): the paper's metrics for every written summary, against its target's
reference."""

from __future__ import annotations

from dataclasses import dataclass

from insight_assets.core.methods.xsum import PROFILE, load, report, scores
from insight_assets.core.methods.xsum import tasks as xsum_tasks
from insight_assets.core.methods.xsum.schemas import SummaryRecord, SummaryTarget
from insight_assets.core.methods.xsum.settings import ScoresSettings
from insight_assets.core.methods.xsum.stages.answers import TARGETS
from insight_assets.core.methods.xsum.stages.summaries import SUMMARIES
from insight_assets.core.methods.xsum.store import summary_costs
from insight_assets.core.page.headlines import Headline, headline_table, measured_note, played_offline
from insight_assets.core.retrieval.citing import load_sources
from insight_assets.core.runtime.stage import CollectionScope, NothingToDo, Stage
from insight_assets.core.runtime.stage_output import (
    StageOutput,
    judge_note,
    preview,
    skipped,
    standin_note,
    table,
    write_report,
)
from insight_assets.core.startup.lazy import pa

SCORES = "xsum_scores"


@dataclass(frozen=True)
class Scored:
    targets: list[SummaryTarget]
    summaries: list[SummaryRecord]  # the written summaries scored
    scored: list[scores.ScoredSummary]


def score(scope: CollectionScope, settings: ScoresSettings) -> Scored:
    """§4.2's metrics for every written summary, against its target's reference."""
    warehouse, collection = scope.warehouse, scope.collection
    targets = scope.upstream(TARGETS)
    written = scope.upstream(SUMMARIES)
    if not written:
        raise NothingToDo("no summaries to score: `xsum_summaries` wrote none.")
    sources = load_sources(warehouse, collection, PROFILE)
    abstracts = {paper.doc_id: paper.abstract for paper in load.load_papers(warehouse, collection)}
    chunk_docs = {chunk_id: source.doc_id for chunk_id, source in sources.items()}
    scored = scores.score_summaries(scope.client, targets, written, chunk_docs, scope.embed, abstracts)
    if not scored:
        raise NothingToDo("no summary has a reference to be scored against.")
    return Scored(targets, written, scored)


# The columns of the score tables, in the metadata, the report and the page.
SCORE_TABLE_COLUMNS = ["method", "targets", *scores.SCORE_COLUMNS]


def output(scope: CollectionScope, settings: ScoresSettings, result: Scored) -> StageOutput:
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


SCORES_STAGE = Stage(
    SCORES,
    "xsum",
    "ROUGE-1/2/L recall, Ref-F1 (precision, recall, F1), a semantic recall with the embedder, "
    "G-Eval coverage and CheckEval for XSum and both baselines: on evaluation targets against the "
    "related-work section, on the others against the papers' abstracts. Table, chart and "
    "data/reports/<collection>/xsum_report.md.",
    ScoresSettings,
    reads=(SUMMARIES.name,),
    run=score,
    output=output,
    tasks=xsum_tasks.JUDGE_TASKS,
    embedder=True,
    judges=ScoresSettings.panel,
)
