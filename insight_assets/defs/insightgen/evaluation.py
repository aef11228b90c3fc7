"""Judging the insight methods and reporting the comparison (InsightGen §5.3, Appendix D)."""

import dataclasses
from collections.abc import Sequence

import dagster as dg
import pyarrow as pa
from pydantic import Field

from insight_assets.core.headlines import Headline, headline_table
from insight_assets.core.llm import LLMClient, RunSummary
from insight_assets.core.methods.insightgen import stages
from insight_assets.core.methods.insightgen import store as insightgen_store
from insight_assets.core.methods.insightgen.judge import (
    JUDGE_INSIGHT_SET,
    JUDGE_SINGLE_INSIGHTS,
    JudgedQuestion,
    JudgeOutcome,
    JudgeRow,
    judge_agreement,
    judge_questions,
    mean_scores,
)
from insight_assets.core.methods.insightgen.report import (
    COST_COLUMNS,
    NOT_JUDGED,
    OFFLINE_JUDGE,
    RANKING_COLUMNS,
    render_method_report,
)
from insight_assets.core.stage import CollectionScope
from insight_assets.defs.insightgen.assets import insights
from insight_assets.defs.metadata import (
    CollectionReport,
    judge_note,
    markdown_table,
    materialize_each,
    standin_note,
    write_report,
    writers,
)
from insight_assets.defs.model_calls import (
    JudgeModel,
    ModelCallConfig,
    collection_scope,
    model_errors_as_failures,
    stop_if_over_budget,
)
from insight_assets.defs.partitions import asset_settings
from insight_assets.defs.pools import LLM_POOL, pooled
from insight_assets.defs.resources import LLMResource, StorageResource

SCORE_COLUMNS = [
    "judge",
    "level",
    "panel",
    "method",
    "novelty",
    "diversity",
    "relevance",
    "depth",
    "overall",
    "count",
]


class InsightGenJudgeConfig(ModelCallConfig):
    """Appendix D: set-level and insight-level judging (ten repetitions), methods shuffled per
    question with a seed. The paper used two judges (Gemini 2.5 Flash and Claude 4 Sonnet)."""

    TASKS = (JUDGE_INSIGHT_SET, JUDGE_SINGLE_INSIGHTS)

    judges: list[JudgeModel] = Field(
        default=[], description="Judges to run; empty: one judge, the `llm` resource's model."
    )
    levels: list[str] = Field(default=["set", "insight"], description="'set' and/or 'insight'.")
    repetitions: int = Field(default=10, description="Insight-level samples per question.")
    seed: int = Field(default=42, description="Seed of the method order and of the sampled insights.")

    def judge_with(self, client: LLMClient, questions: Sequence[JudgedQuestion], judge: str) -> JudgeOutcome:
        """One judge's scores of ``questions`` at these levels, repetitions and seed."""
        return judge_questions(
            client, questions, judge=judge, seed=self.seed, levels=self.levels, repetitions=self.repetitions
        )

    def stage(self, scope: CollectionScope) -> list[JudgeOutcome]:
        """The dry run's stage: every judge's calls, priced on the scope's one client (the asset
        gives each judge a client of its own)."""
        questions = stages.questions_to_judge(scope)
        return [self.judge_with(scope.client, questions, judge.name) for judge in self.judges or [_ONE_JUDGE]]


# The judge a config without ``judges`` runs: the `llm` resource's model.
_ONE_JUDGE = JudgeModel(name="llm")


@dg.asset(
    kinds={"duckdb"}, deps=[insights], code_version="1", **pooled(LLM_POOL), **asset_settings("insightgen")
)
def judge_scores(
    context: dg.AssetExecutionContext,
    config: InsightGenJudgeConfig,
    storage: StorageResource,
    llm: LLMResource,
) -> dg.MaterializeResult:
    """Every judge's 0-5 scores of every method's insights: at set level (novelty, diversity,
    relevance, depth, all methods' sets shown together under shuffled anonymous labels) and at
    insight level (one sampled insight per method, ten repetitions, no diversity)."""
    unknown = sorted(set(config.levels) - {"set", "insight"})
    if unknown or not config.levels:
        raise dg.Failure(description=f"Unknown or no judging levels {unknown}; use 'set' and/or 'insight'.")
    return materialize_each(
        context, storage, lambda collection: _judge_scores(context, config, storage, llm, collection)
    )


def _judge_name(llm: LLMResource) -> str:
    provider, model, _ = llm.choice()
    return OFFLINE_JUDGE if provider == "offline" else f"{provider}:{model or 'default'}"


AGREEMENT_COLUMNS = [
    "level",
    "judge_a",
    "judge_b",
    "questions",
    "pairwise_agreement",
    "spearman_median",
    "spearman_mean",
]


@dataclasses.dataclass
class _Panel:
    """What the judges made: their scores, the questions they could not judge, each judge's
    calls (summed and as rows) and what each judge is."""

    rows: list[JudgeRow] = dataclasses.field(default_factory=list)
    failures: list[dict] = dataclasses.field(default_factory=list)
    summaries: dict[str, dict] = dataclasses.field(default_factory=dict)
    calls: list = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)


def _run_judges(storage, config, collection, questions, judges, scopes) -> _Panel:
    panel = _Panel()
    insight_writers = writers(storage, "insights", collection)
    for judge, scope in zip(judges, scopes, strict=True):
        client = scope.client
        label = client.writer_label(JUDGE_INSIGHT_SET)
        panel.notes.append(
            f"{judge.name}: "
            + judge_note(label, insight_writers, "lexical stand-in scores, not a model's judgement")
        )
        with model_errors_as_failures(client, collection):
            outcome = config.judge_with(client, questions, judge.name)
        stop_if_over_budget(client, collection, outcome.budget_error)
        panel.rows += outcome.rows
        panel.failures += [
            {"judge": judge.name, "question": q, "error": error} for q, error in outcome.failures
        ]
        panel.summaries[judge.name] = client.summary().as_metadata()
        panel.calls += client.rows
    return panel


def _judge_scores(context, config, storage, llm, collection) -> CollectionReport:
    judges = config.judges or [JudgeModel(name=_judge_name(llm))]
    # Each judge has a client of its own; the questions are read once, through the first's scope.
    scopes = [
        collection_scope(context, storage, llm, config, collection, model_choice=judge.choice())
        for judge in judges
    ]
    questions = stages.questions_to_judge(scopes[0])
    if not questions:
        # `insights` says why with its own warning; nothing is judged, nothing is invented.
        storage.warehouse.replace_partition(collection, {"judge_scores": pa.Table.from_pylist([])})
        why = "no insights to judge: `insights` produced none (see its checks and failures)."
        return CollectionReport(metadata={"dagster/row_count": 0, "why_none": why})
    panel = _run_judges(storage, config, collection, questions, judges, scopes)
    rows, failures, summaries, judge_notes = panel.rows, panel.failures, panel.summaries, panel.notes
    table = pa.Table.from_pylist([{"collection": collection, **dataclasses.asdict(row)} for row in rows])
    storage.warehouse.replace_partition(collection, {"judge_scores": table})

    scores = [{key: _rounded(value) for key, value in row.items()} for row in mean_scores(rows)]
    names = [judge.name for judge in judges]
    agreements = [
        {key: _rounded(value) for key, value in judge_agreement(rows, a, b, level).items()}
        for level in config.levels
        for i, a in enumerate(names)
        for b in names[i + 1 :]
    ]
    total = RunSummary.from_rows(
        ", ".join(sorted({s["llm_provider"] for s in summaries.values()})), panel.calls
    )
    return CollectionReport(
        metadata={
            "dagster/row_count": len(rows),
            "questions": len(questions),
            "judges": ", ".join(names),
            "judge_models": dg.MetadataValue.md("\n".join(f"- {note}" for note in judge_notes)),
            "failed_calls": len(failures),
            "mean_scores": dg.MetadataValue.md(
                markdown_table(scores, SCORE_COLUMNS, empty="Nothing judged.")
            ),
            "judge_agreement": dg.MetadataValue.md(
                markdown_table(
                    agreements,
                    AGREEMENT_COLUMNS,
                    empty="One judge: configure two or more `judges` to measure agreement.",
                )
            ),
            "failures": dg.MetadataValue.md(
                markdown_table(failures, ["judge", "question", "error"], empty="None.")
            ),
            "llm_by_judge": dg.MetadataValue.json(summaries),
            **{key: value for key, value in total.as_metadata().items() if key != "llm_provider"},
        }
    )


def _rounded(value):
    return round(value, 3) if isinstance(value, float) else value


@dg.asset(kinds={"duckdb"}, deps=[judge_scores], code_version="1", **asset_settings("insightgen"))
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
            [standin_note({"writer": writers(storage, "insights", collection), "judge": ", ".join(judges)})],
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
        writer=writers(storage, "insights", collection),
        judge=", ".join(sorted({row.judge for row in rows})),
    )
    written = write_report(
        storage,
        collection,
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
