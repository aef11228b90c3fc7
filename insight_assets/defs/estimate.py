"""A dry run of a collection's model calls: tokens and cost, per task, before spending anything.

The chain runs through an estimate-only client (see ``LLMClient``): each step prices the prompts
the configured provider would read (prompts already in the cache are free) and goes on with the
offline answers, so the later steps are priced on inputs of a realistic size. No provider is
called and no key is needed. From the UI: the job ``estimate_llm_cost`` (pick a collection); from
a shell: ``insight-assets estimate --collection NAME``.
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dagster as dg

from insight_assets.core import curation
from insight_assets.core.index import IndexMissing, load_theme_index
from insight_assets.core.judge import (
    JudgedQuestion,
    MethodInsights,
    judge_questions,
)
from insight_assets.core.llm import DryRunEstimate, LLMClient, ResponseCache
from insight_assets.core.methods import insight_text
from insight_assets.core.methods.contexts import build_contexts
from insight_assets.core.methods.insight_runs import QAPair, run_insight_methods
from insight_assets.defs.curation import (
    USER_QUESTIONS_FILE,
    AnswerConfig,
    CompressionConfig,
    QuestionConfig,
    papers_to_compress,
)
from insight_assets.defs.evaluation import JudgeConfig
from insight_assets.defs.insights import InsightsConfig
from insight_assets.defs.metadata import markdown_table
from insight_assets.defs.partitions import collection_folder, collection_partitions
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource

ESTIMATE_COLUMNS = [
    "task",
    "provider",
    "model",
    "items",
    "cached_items",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "max_cost_usd",
]


def estimate_collection(
    storage: StorageResource, llm: LLMResource, embedder: EmbedderResource, collection: str
) -> list[DryRunEstimate]:
    """What building ``collection``'s model-calling assets would cost with their default config
    (one judge, the configured model).

    Needs the collection's parsed documents in the warehouse; `insights` and `judge_scores` are
    priced too once the collection has a theme graph.
    """
    compression, questions, answers = CompressionConfig(), QuestionConfig(), AnswerConfig()
    overrides = {
        **compression.task_overrides(),
        **questions.task_overrides(),
        **answers.task_overrides(),
        **InsightsConfig().task_overrides(),
        **JudgeConfig().task_overrides(),
    }
    client = LLMClient(
        llm.settings(overrides),
        cache=ResponseCache.in_data_dir(Path(llm.data_dir)) if llm.use_cache else None,
        estimate_only=True,
    )
    embed = embedder.get_embedder().embed
    compressed = curation.compress_documents(
        client, papers_to_compress(storage, collection), compression.settings()
    ).compressed
    user = curation.load_user_questions(
        collection_folder(storage.collections_root, collection) / USER_QUESTIONS_FILE,
        known_document_ids={document.document_id for document in compressed},
    )
    generated = curation.generate_questions(client, compressed, questions.settings(), embed)
    answered = curation.generate_answers(
        client,
        curation.merge_user_questions(user.questions, generated.questions),
        compressed,
        answers.settings(),
        embed,
    )
    _estimate_insights(client, storage, embedder, collection, answered.answers)
    return client.estimates()


def _estimate_insights(client, storage, embedder, collection, answers) -> None:
    """Price `insights` and `judge_scores` on the estimated answers, when the collection's theme
    graph exists (it needs no model, but does need a build)."""
    model = embedder.get_embedder()
    try:
        index, cluster_index = load_theme_index(storage.warehouse, storage.vectors, collection, model.variant)
    except IndexMissing:
        return
    config = InsightsConfig()
    pairs = [QAPair(a.question_id, a.question, a.answer) for a in answers if a.status == "kept"]
    contexts = build_contexts(
        pairs, index.chunks, index.vectors, cluster_index, model.embed, config.methods, config.selection()
    )
    outcome = run_insight_methods(client, pairs, contexts, max_insights=config.max_insights)
    sets: dict[str, dict[str, tuple[str, ...]]] = {}
    for run in outcome.runs:
        sets.setdefault(run.question_id, {})[run.method] = tuple(insight_text(i) for i in run.insights)
    judge = JudgeConfig()
    judge_questions(
        client,
        [
            JudgedQuestion(
                pair.question_id,
                pair.question,
                pair.answer,
                tuple(MethodInsights(m, t) for m, t in sets.get(pair.question_id, {}).items()),
            )
            for pair in pairs
        ],
        judge="estimate",
        seed=judge.seed,
        levels=judge.levels,
        repetitions=judge.repetitions,
    )


def estimate_rows(estimates: Sequence[DryRunEstimate]) -> list[dict[str, Any]]:
    """One row per task plus a total, costs as strings ("n/a" where the model has no price)."""
    rows: list[dict[str, Any]] = []
    for estimate in estimates:
        rows.append(
            {
                "task": estimate.task,
                "provider": estimate.provider,
                "model": estimate.model,
                "items": estimate.items,
                "cached_items": estimate.cached_items,
                "input_tokens": estimate.input_tokens,
                "output_tokens": estimate.output_tokens,
                "cost_usd": _usd(estimate.cost_usd),
                "max_cost_usd": _usd(estimate.max_cost_usd),
            }
        )
    priced = all(estimate.cost_usd is not None for estimate in estimates)
    rows.append(
        {
            "task": "total",
            "items": sum(estimate.items for estimate in estimates),
            "cached_items": sum(estimate.cached_items for estimate in estimates),
            "input_tokens": sum(estimate.input_tokens for estimate in estimates),
            "output_tokens": sum(estimate.output_tokens for estimate in estimates),
            "cost_usd": _usd(sum(e.cost_usd or 0.0 for e in estimates)) if priced else "n/a",
            "max_cost_usd": _usd(sum(e.max_cost_usd or 0.0 for e in estimates)) if priced else "n/a",
        }
    )
    return rows


def _usd(amount: float | None) -> str:
    return "n/a" if amount is None else f"{amount:.4f}"


@dg.op(out=dg.Out(dg.Nothing))
def estimate_model_calls(
    context: dg.OpExecutionContext, storage: StorageResource, llm: LLMResource, embedder: EmbedderResource
) -> dg.Output:
    """Price the collection's model calls with the configured `llm` resource; call nothing."""
    estimates = estimate_collection(storage, llm, embedder, context.partition_key)
    rows = estimate_rows(estimates)
    total = rows[-1]
    context.log.info(
        f"{context.partition_key}: {total['items']} model calls, {total['input_tokens']} input and about "
        f"{total['output_tokens']} output tokens, estimated cost {total['cost_usd']} USD"
    )
    notes = sorted({estimate.note for estimate in estimates if estimate.note})
    return dg.Output(
        None,
        metadata={
            "estimate": dg.MetadataValue.md(markdown_table(rows, ESTIMATE_COLUMNS)),
            "calls": total["items"],
            "input_tokens": total["input_tokens"],
            "output_tokens": total["output_tokens"],
            "cost_usd": total["cost_usd"],
            "notes": "; ".join(notes) or "none",
        },
    )


@dg.job(
    partitions_def=collection_partitions,
    description="Dry run: tokens and cost of a collection's model calls.",
)
def estimate_llm_cost() -> None:
    estimate_model_calls()
