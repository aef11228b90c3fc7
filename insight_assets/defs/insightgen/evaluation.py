"""The comparison report of the insight methods (InsightGen §5.3, Appendix D): the judges'
scores (``judge_scores``, a declared stage) as a table, a chart and examples side by side."""

import dataclasses
from pathlib import Path

import dagster as dg

from insight_assets.core.methods.insightgen import store as insightgen_store
from insight_assets.core.methods.insightgen.judge import JudgeRow, mean_scores
from insight_assets.core.methods.insightgen.report import (
    COST_COLUMNS,
    NOT_JUDGED,
    RANKING_COLUMNS,
    render_method_report,
)
from insight_assets.core.methods.insightgen.stages import JUDGE_SCORES
from insight_assets.core.page.headlines import Headline, headline_table
from insight_assets.core.runtime.stage_output import ReportPlace, standin_note
from insight_assets.defs.materialization import CollectionReport, materialize_each
from insight_assets.defs.metadata import markdown_table, report_metadata
from insight_assets.defs.partitions import asset_settings
from insight_assets.defs.resources import StorageResource


@dg.asset(kinds={"duckdb"}, code_version="1", **asset_settings("insightgen", deps=[JUDGE_SCORES]))
def method_report(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
    """Mean scores per method (and judge) as a table and a bar chart, with example insights side
    by side; also written to data/reports/<collection>/method_report.md."""
    return materialize_each(context, storage, lambda collection: _method_report(storage, collection))


def _report_notes(storage: StorageResource, collection: str, judges: list[str]) -> list[str]:
    return [
        "judges: "
        + ", ".join(judges)
        + " (see `judge_scores`' judge_models for each judge's model and whether it is self-judged)",
        (
            "iterative_rag, multi_query_rag, agentic_rag: RQ5's advanced RAG baselines, as many chunks "
            "as InsightGen selected, chosen by decomposition and self-refinement / reformulations and the "
            "model's re-rank / HyDE, reformulations, decomposition, refinement and re-rank; written with "
            "InsightGen's chain-of-thought prompts"
        ),
        *filter(
            None,
            [
                standin_note(
                    {"writer": storage.warehouse.writers("insights", collection), "judge": ", ".join(judges)}
                )
            ],
        ),
    ]


def _method_report(storage: StorageResource, collection: str) -> CollectionReport:
    warehouse = storage.warehouse
    fields = {field.name for field in dataclasses.fields(JudgeRow)}
    rows = [
        JudgeRow(**{key: value for key, value in row.items() if key in fields})
        for row in insightgen_store.load_judge_scores(warehouse, collection)
    ]
    if not rows:
        why = "no judge scores to report: `judge_scores` holds none (no insights were found to judge)."
        return CollectionReport(metadata={"dagster/row_count": 0, "why_none": why})
    examples = insightgen_store.report_examples(warehouse, collection)
    costs = insightgen_store.method_costs(warehouse, collection)
    notes = _report_notes(storage, collection, sorted({row.judge for row in rows}))
    scores = mean_scores(rows)
    report = render_method_report(collection, scores, examples, costs, notes)
    ranked = (
        headline_table(
            "Methods ranked by the judge's overall score (0-5), per panel", report.ranking, RANKING_COLUMNS
        ),
    )
    headline = Headline(
        tables=(
            *(ranked if report.ranking else ()),
            headline_table("Cost per question", costs, COST_COLUMNS),
        ),
        notes=tuple(notes if report.ranking else [NOT_JUDGED, *notes]),
        writer=storage.warehouse.writers("insights", collection),
        judge=", ".join(sorted({row.judge for row in rows})),
    )
    written = report_metadata(
        ReportPlace(storage.warehouse, Path(storage.reports_dir), collection),
        "method_report.md",
        report.markdown,
        "method_scores.png",
        report.chart_png,
        "mean scores per method",
        headline,
    )
    return CollectionReport(
        metadata={
            "dagster/row_count": len(scores),
            "ranking": dg.MetadataValue.md(
                markdown_table(report.ranking, RANKING_COLUMNS) if report.ranking else NOT_JUDGED
            ),
            "scores": dg.MetadataValue.md(report.scores_table),
            "examples": dg.MetadataValue.md(report.examples_markdown),
            **written,
        }
    )
