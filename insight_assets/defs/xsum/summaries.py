"""XSum's summary assets: the summaries of each target (XSum and its baselines), their scores and the report."""

import dagster as dg
import pyarrow as pa
from pydantic import Field

from insight_assets.core.headlines import Headline, headline_table, measured_note, played_offline
from insight_assets.core.methods import xsum
from insight_assets.core.methods.xsum import report, scores, stages
from insight_assets.core.stage import CollectionScope
from insight_assets.defs.metadata import (
    CollectionReport,
    config_settings,
    judge_note,
    markdown_table,
    materialize_each,
    skipped_metadata,
    standin_note,
    write_report,
    writers,
)
from insight_assets.defs.model_calls import (
    JudgeCallConfig,
    ModelCallConfig,
    collection_scope,
    llm_metadata,
    run_stage,
)
from insight_assets.defs.pools import LLM_POOL, pooled
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource
from insight_assets.defs.xsum.assets import XSUM_GROUP, xsum_answers

# -- summaries --------------------------------------------------------------------------------


class XSumSummariesConfig(ModelCallConfig):
    """§3.5: the editor at temperature 0.3, top-p 0.95, max_tokens sized to its input; the baselines
    plain RAG (topic as query, top 20 by cosine) and abstracts only, on every target."""

    TASKS = (xsum.tasks.XSUM_EDITOR, xsum.tasks.XSUM_TOPIC_SUMMARY)

    baselines: bool = Field(
        default=True, description="Also write the plain-RAG and abstracts-only summaries."
    )
    plain_rag_k: int = Field(default=xsum.TOP_N, ge=1, description="Chunks the plain-RAG baseline reads.")
    pipeline_1_top_n: int = Field(
        default=xsum.TOP_N, ge=1, description="Chunks Pipeline 1 summarises, the ranker's best."
    )
    pipeline_2_candidates: int = Field(
        default=xsum.CANDIDATES,
        ge=1,
        description="Chunks Pipeline 2 retrieves on the title before its LLM re-rank.",
    )

    def baseline_settings(self) -> xsum.BaselineSettings | None:
        """The baselines' settings; ``None`` when they are off."""
        if not self.baselines:
            return None
        return config_settings(self, xsum.BaselineSettings, "xsum_summaries")

    def stage(self, scope: CollectionScope) -> stages.Summarized:
        return stages.summaries(scope, self.baseline_settings())


@dg.asset(
    kinds={"duckdb"},
    deps=[xsum_answers],
    code_version="1",
    **pooled(LLM_POOL),
    check_specs=[
        dg.AssetCheckSpec(
            "summary_citations_in_target",
            asset="xsum_summaries",
            description="Every citation of every summary is a chunk its writer was given, of one of its target's papers; an invented alias, or a writer rejected for citing sources it was not given, fails it.",
        ),
        dg.AssetCheckSpec(
            "summaries_not_truncated",
            asset="xsum_summaries",
            description="No summary was cut off at max_tokens (after one retry with twice the room).",
        ),
    ],
    **XSUM_GROUP,
)
def xsum_summaries(
    context: dg.AssetExecutionContext,
    config: XSumSummariesConfig,
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
) -> dg.MaterializeResult:
    """One summary per target by the editor from its answers, citations kept as chunk ids and
    rendered as (Title, pp. a-b); with the baselines beside it: SurveySum's Pipeline 1 and Pipeline 2
    (the paper's Table 1), plain RAG and abstracts only."""
    return materialize_each(
        context, storage, lambda collection: _summaries(context, config, storage, llm, embedder, collection)
    )


def _summaries(context, config, storage, llm, embedder, collection) -> CollectionReport:
    scope = collection_scope(context, storage, llm, config, collection, embedder)
    summarized = run_stage(config, scope)
    targets, sources, client = summarized.targets, summarized.sources, scope.client
    records, costs = summarized.written.records, summarized.written.costs
    writers = {
        xsum.XSUM: client.writer_label(xsum.tasks.XSUM_EDITOR),
        xsum.PIPELINE_1: client.writer_label(xsum.tasks.XSUM_TOPIC_SUMMARY),
        xsum.PIPELINE_2: client.writer_label(xsum.tasks.XSUM_TOPIC_SUMMARY),
        xsum.PLAIN_RAG: client.writer_label(xsum.tasks.XSUM_TOPIC_SUMMARY),
        xsum.ABSTRACTS_ONLY: client.writer_label(xsum.tasks.XSUM_EDITOR),
    }
    scope.warehouse.replace_partition(
        collection,
        {
            "xsum_summaries": _summary_table(
                collection, records, writers, {m: c.per(len(targets)) for m, c in costs.items()}
            )
        },
    )
    chunk_docs = {cid: source.doc_id for cid, source in sources.items()}
    problems = xsum.summary_citations_valid(records, {t.target_id: t for t in targets}, chunk_docs)
    return CollectionReport(
        metadata={**_summaries_metadata(records, targets), **llm_metadata(client)},
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
    example = next((r for r in records if r.method == xsum.XSUM and r.text), None)
    failures = [
        {"method": r.method, "topic": topics[r.target_id], "status": r.status, "error": r.error}
        for r in records
        if r.error
    ]
    return {
        "dagster/row_count": sum(bool(r.text) for r in records),
        "summaries": dg.MetadataValue.json(status_counts),
        "citations_dropped_by_editor": sum(len(r.dropped) for r in records if r.method == xsum.XSUM),
        "example": dg.MetadataValue.md(
            f"**{topics[example.target_id]}**\n\n{example.rendered}" if example else "No XSum summary."
        ),
        "failures": dg.MetadataValue.md(
            markdown_table(failures, ["method", "topic", "status", "error"], empty="None.")
        ),
    }


def _summaries_checks(records, targets, problems: list[str]) -> list[dg.AssetCheckResult]:
    topics = {t.target_id: t.topic for t in targets}
    truncated = [r for r in records if r.status == xsum.TRUNCATED]
    return [
        dg.AssetCheckResult(
            check_name="summary_citations_in_target",
            passed=not problems,
            metadata={
                "summaries_checked": sum(bool(r.text) for r in records),
                "problems": "; ".join(problems[:10]) or "none",
            },
        ),
        dg.AssetCheckResult(
            check_name="summaries_not_truncated",
            passed=not truncated,
            metadata={
                "truncated": "; ".join(f"{r.method}: {topics[r.target_id]}" for r in truncated) or "none"
            },
        ),
    ]


def _summary_table(collection, records, writers, costs) -> pa.Table:
    """The summaries, each with its method's cost per target of this step (``costs``)."""
    return pa.Table.from_pylist(
        [
            {
                "collection": collection,
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
                "writer": writers[r.method],
                **costs[r.method],
            }
            for r in records
        ]
    )


# -- scores and report ------------------------------------------------------------------------


class XSumScoresConfig(JudgeCallConfig):
    """§4.2's metrics; the judge may be another model than the generator's (the paper judged with
    Phi-3 what GPT-4o-mini wrote, §4.3)."""

    TASKS = xsum.tasks.JUDGE_TASKS

    def stage(self, scope: CollectionScope) -> stages.Scored:
        return stages.score(scope)


@dg.asset(kinds={"duckdb"}, deps=[xsum_summaries], code_version="1", **pooled(LLM_POOL), **XSUM_GROUP)
def xsum_scores(
    context: dg.AssetExecutionContext,
    config: XSumScoresConfig,
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
) -> dg.MaterializeResult:
    """ROUGE-1/2/L recall, Ref-F1 (precision, recall, F1), a semantic recall with the embedder,
    G-Eval coverage and CheckEval for XSum and both baselines: on evaluation targets against the
    related-work section, on the others against the papers' abstracts. Table, chart and
    data/reports/<collection>/xsum_report.md."""
    return materialize_each(
        context, storage, lambda collection: _scores(context, config, storage, llm, embedder, collection)
    )


# The columns of the score tables, in the metadata, the report and the page.
SCORE_TABLE_COLUMNS = ["method", "targets", *scores.SCORE_COLUMNS]


def _scores(context, config, storage, llm, embedder, collection) -> CollectionReport:
    scope = collection_scope(context, storage, llm, config, collection, embedder, config.judge_choice())
    result = run_stage(config, scope)
    targets, summaries, scored, client = result.targets, result.summaries, result.scored, scope.client
    warehouse = scope.warehouse
    judge = client.writer_label(xsum.tasks.GEVAL_COVERAGE)
    mode = scores.geval_mode(client)
    warehouse.replace_partition(collection, {"xsum_scores": _score_table(collection, scored, judge)})
    tables = report.score_tables(scored)
    written = _write_scores_report(storage, collection, targets, summaries, scored, tables, judge, mode)
    return CollectionReport(
        metadata={
            "dagster/row_count": len(scored),
            "evaluation_targets": sum(t.is_evaluation for t in targets),
            **skipped_metadata(
                {}
                if any(t.is_evaluation for t in targets)
                else {
                    "scores against related-work sections": "no evaluation target (see `skipped` of xsum_answers)."
                }
            ),
            **{
                f"scores_vs_{kind}": dg.MetadataValue.md(markdown_table(rows, SCORE_TABLE_COLUMNS))
                for kind, rows in tables.items()
            },
            "judge": judge,
            "geval": mode,
            **written,
            **llm_metadata(client),
        }
    )


def _score_table(collection, scored, judge) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "collection": collection,
                "target_id": s.target_id,
                "method": s.method,
                "reference_kind": s.reference_kind,
                **s.scores,
                "judge": judge,
                "errors": list(s.errors),
            }
            for s in scored
        ]
    )


def _write_scores_report(storage, collection, targets, summaries, scored, tables, judge, mode) -> dict:
    """The markdown report with its chart, and the headline the collection's page shows."""
    costs = report.cost_table(xsum.store.summary_costs(storage.warehouse, collection))
    topics = {t.target_id: t.topic for t in targets}
    offline_judge = played_offline(judge)
    ranked_by = report.RANKED_BY_OFFLINE if offline_judge else report.RANKED_BY
    examples = report.best_and_worst(
        scored,
        {(s.target_id, s.method): {"topic": topics[s.target_id], "rendered": s.rendered} for s in summaries},
        ranked_by,
    )
    summary_writers = writers(storage, "xsum_summaries", collection)
    roles = {
        "question writer": writers(storage, "xsum_questions", collection),
        "answerer": writers(storage, "xsum_answers", collection),
        "summary writer": summary_writers,
        "judge": judge,
    }
    notes = _score_notes(judge, mode, summary_writers, roles)
    # The page shows no placeholder: the offline judge's scores stay in the report.
    shown = [c for c in SCORE_TABLE_COLUMNS if not (offline_judge and c in scores.JUDGED_COLUMNS)]
    return write_report(
        storage,
        collection,
        "xsum_report.md",
        report.render_report(collection, tables, examples, notes, costs, ranked_by),
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
