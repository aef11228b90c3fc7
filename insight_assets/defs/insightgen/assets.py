"""The insights asset: InsightGen and its four baselines for every question-answer pair (§4, §5.1)."""

import dagster as dg
import numpy as np
import pyarrow as pa
from pydantic import Field

from insight_assets.core.methods import insightgen
from insight_assets.core.methods.insightgen import INSIGHT_METHODS, OK, insight_text, stages
from insight_assets.core.methods.insightgen.repetition import REPEATS_ANSWER_COSINE, repeating_insights
from insight_assets.core.methods.insightgen.selection import SelectionSettings
from insight_assets.core.stage import CollectionScope
from insight_assets.defs.curation.assets import generated_answers
from insight_assets.defs.insightgen.themes import theme_graph
from insight_assets.defs.metadata import (
    CollectionReport,
    config_settings,
    items_check,
    markdown_table,
    materialize_each,
)
from insight_assets.defs.model_calls import (
    ModelCallConfig,
    collection_scope,
    llm_metadata,
    run_stage,
    stop_if_over_budget,
)
from insight_assets.defs.partitions import asset_settings
from insight_assets.defs.pools import LLM_POOL, pooled
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource


class InsightGenInsightsConfig(ModelCallConfig):
    """Defaults from InsightGen: top-k 5 neighbouring clusters within 2 hops, up to five insights,
    generation at temperature 0.7 with 4,000 output tokens (Appendix C)."""

    TASKS = insightgen.TASKS

    methods: list[str] = Field(
        default=list(INSIGHT_METHODS), description=f"Any of {', '.join(INSIGHT_METHODS)}."
    )
    top_k: int = Field(default=5, description="Related clusters added to the answer's own.")
    max_hops: int = Field(default=2, description="How far on the graph related clusters may be.")
    token_budget: int = Field(
        default=12000,
        description="Context tokens per question for every method (the baselines' fixed budget too).",
    )
    max_insights: int = Field(default=5, description="Insights per method and question.")
    max_questions: int | None = Field(
        default=None, description="Only the first N question-answer pairs (cost control)."
    )
    temperature: float | None = Field(default=0.7, description="Appendix C: temperature 0.7.")
    max_tokens: int | None = Field(default=4000, description="Appendix C: max_tokens 4000.")

    def settings(self) -> insightgen.InsightGenSettings:
        selection = config_settings(self, SelectionSettings, "insights")
        return config_settings(self, insightgen.InsightGenSettings, "insights", selection=selection)

    def stage(self, scope: CollectionScope) -> stages.Found:
        return stages.find_insights(scope, self.settings(), self.max_questions)


@dg.asset(
    kinds={"duckdb"},
    deps=[theme_graph, generated_answers],
    code_version="1",
    **pooled(LLM_POOL),
    check_specs=[
        dg.AssetCheckSpec(
            "insights_cite_their_context",
            asset="insights",
            description="Every stored insight cites at least one chunk, and only chunks its method was given "
            "for that question (the run's context).",
        ),
        dg.AssetCheckSpec(
            "insights_do_not_repeat_the_answer",
            asset="insights",
            description=f"No insight is at cosine >= {REPEATS_ANSWER_COSINE} to a sentence of its answer.",
        ),
        dg.AssetCheckSpec(
            "questions_to_find_insights_for",
            asset="insights",
            description="`generated_answers` kept a question-answer pair to find insights for.",
        ),
    ],
    **asset_settings("insightgen"),
)
def insights(
    context: dg.AssetExecutionContext,
    config: InsightGenInsightsConfig,
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
) -> dg.MaterializeResult:
    """Up to five related insights per question-answer pair and method: InsightGen (the answer's
    theme clusters and their graph neighbours, chain of thought) and the baselines Direct, CoT,
    vector top-k and vector top-k with CoT, in one table with a `method` column."""
    unknown = sorted(set(config.methods) - set(INSIGHT_METHODS))
    if unknown or not config.methods:
        raise dg.Failure(
            description=f"Unknown or no methods {unknown}; choose from {', '.join(INSIGHT_METHODS)}."
        )
    return materialize_each(
        context, storage, lambda collection: _insights(context, config, storage, llm, embedder, collection)
    )


def _insights(context, config, storage, llm, embedder, collection) -> CollectionReport:
    scope = collection_scope(context, storage, llm, config, collection, embedder)
    found, client, warehouse, model = run_stage(config, scope), scope.client, scope.warehouse, scope.embedder
    pairs, result = found.pairs, found.result
    if result is None:
        return _no_insights(warehouse, collection)
    contexts, outcome = result.contexts, result.outcome
    stop_if_over_budget(client, collection, outcome.budget_error)
    writer = client.writer_label(insightgen.GENERATE_INSIGHTS)
    warehouse.replace_partition(collection, _tables(collection, contexts, outcome, writer, result.retrieval))

    insight_rows = [(run, insight) for run in outcome.runs for insight in run.insights]
    failed = [run for run in outcome.runs if run.status != OK]
    examples = [
        {"method": run.method, "type": insight.type, "insight": insight_text(insight)[:300]}
        for run in outcome.runs[: len(config.methods)]
        for insight in run.insights[:2]
    ]
    return CollectionReport(
        metadata={
            "dagster/row_count": len(insight_rows),
            "questions": len(pairs),
            "insights_per_method": dg.MetadataValue.json(
                {m: sum(len(run.insights) for run in outcome.runs if run.method == m) for m in config.methods}
            ),
            "failed_runs": len(failed),
            "mean_context_tokens": dg.MetadataValue.json(
                {
                    m: round(float(np.mean([c.tokens for c in contexts if c.method == m])), 1)
                    for m in config.methods
                }
                if contexts
                else {}
            ),
            "examples": dg.MetadataValue.md(
                markdown_table(examples, ["method", "type", "insight"], empty="No insights.")
            ),
            "failures": _failures_table(failed),
            **llm_metadata(client),
        },
        checks=[
            _cite_their_context(warehouse, collection, len(insight_rows)),
            _do_not_repeat_the_answer(model, pairs, insight_rows),
            items_check("questions_to_find_insights_for", len(pairs), ""),
        ],
    )


def _failures_table(failed) -> dg.MetadataValue:
    rows = [{"method": r.method, "question": r.question_id, "error": r.error} for r in failed]
    return dg.MetadataValue.md(markdown_table(rows, ["method", "question", "error"], empty="None."))


def _cite_their_context(warehouse, collection: str, checked: int) -> dg.AssetCheckResult:
    uncited = insightgen.store.cited_outside_context(
        insightgen.store.insights_with_contexts(warehouse, collection)
    )
    return dg.AssetCheckResult(
        check_name="insights_cite_their_context",
        passed=not uncited,
        metadata={
            "insights_checked": checked,
            "outside_context": len(uncited),
            "examples": "; ".join(uncited[:5]) or "none",
        },
    )


def _do_not_repeat_the_answer(model, pairs, insight_rows) -> dg.AssetCheckResult:
    """Insights that say again a sentence of their question's answer: weak insights, not wrong data."""
    answers = {pair.question_id: pair.answer for pair in pairs}
    repeats = repeating_insights(
        model.embed, [(run.question_id, insight_text(insight)) for run, insight in insight_rows], answers
    )
    return dg.AssetCheckResult(
        check_name="insights_do_not_repeat_the_answer",
        passed=not repeats,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "threshold": REPEATS_ANSWER_COSINE,
            "insights_checked": len(insight_rows),
            "repeating": dg.MetadataValue.md(
                markdown_table(
                    [
                        {
                            "insight": insight_rows[r.index][1].hook,
                            "cosine": round(r.cosine, 3),
                            "answer_sentence": r.sentence[:200],
                        }
                        for r in repeats[:10]
                    ],
                    ["insight", "cosine", "answer_sentence"],
                    empty="None.",
                )
            ),
        },
    )


def _no_insights(warehouse, collection: str) -> CollectionReport:
    """No pair to find insights for (every answer failed its checks, say): zero rows, and the
    warning check says why."""
    why = "no question-answer pairs to find insights for: `generated_answers` kept none (see its failures)."
    warehouse.replace_partition(
        collection,
        {name: pa.Table.from_pylist([]) for name in ("insight_runs", "insights", "insight_intents")},
    )
    none = {"problems": "none: no insights"}
    return CollectionReport(
        metadata={"dagster/row_count": 0, "why_none": why},
        checks=[
            dg.AssetCheckResult(check_name="insights_cite_their_context", passed=True, metadata=none),
            dg.AssetCheckResult(check_name="insights_do_not_repeat_the_answer", passed=True, metadata=none),
            items_check("questions_to_find_insights_for", 0, why),
        ],
    )


def _tables(collection, contexts, outcome, writer, retrieval) -> dict[str, pa.Table]:
    runs = {(run.method, run.question_id): run for run in outcome.runs}
    run_rows = [
        {
            "collection": collection,
            "question_id": c.question_id,
            "method": c.method,
            "status": runs[(c.method, c.question_id)].status,
            "error": runs[(c.method, c.question_id)].error,
            "chunk_ids": list(c.chunk_ids),
            "context_tokens": c.tokens,
            "truncated": c.truncated,
            "answer_clusters": list(c.answer_clusters),
            "related_clusters": list(c.related_clusters),
            # Retrieval that needed the model (the RAG baselines'); none for the others.
            "retrieval_calls": retrieval.get(c.method, {}).get("calls", 0.0),
            "retrieval_seconds": retrieval.get(c.method, {}).get("seconds", 0.0),
        }
        for c in contexts
    ]
    insight_rows = [
        {
            "collection": collection,
            "question_id": run.question_id,
            "method": run.method,
            "insight_index": position,
            **insight.model_dump(),
            "writer": writer,
        }
        for run in outcome.runs
        for position, insight in enumerate(run.insights)
    ]
    intent_rows = [
        {"collection": collection, "question_id": question_id, **intent.model_dump()}
        for question_id, intent in sorted(outcome.intents.items())
    ]
    return {
        "insight_runs": pa.Table.from_pylist(run_rows),
        "insights": pa.Table.from_pylist(insight_rows),
        "insight_intents": pa.Table.from_pylist(intent_rows),
    }
