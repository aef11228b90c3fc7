"""Insight-RAG's retriever accuracy stage (§5.4, Table 3): the insight retriever alone, mode by mode."""

from __future__ import annotations

from dataclasses import dataclass

from insight_assets.core.methods.insight_rag import accuracy, store
from insight_assets.core.methods.insight_rag.benchmark import BenchmarkItem
from insight_assets.core.methods.insight_rag.causal_lm import CausalLM, base_model_source
from insight_assets.core.methods.insight_rag.schemas import BASE_MODEL, LLM, PARAMETRIC, RETRIEVER_MODES
from insight_assets.core.methods.insight_rag.settings import AccuracySettings, AnswersSettings
from insight_assets.core.methods.insight_rag.stages.answers import RETRIEVER
from insight_assets.core.methods.insight_rag.stages.benchmark import BENCHMARK
from insight_assets.core.methods.insight_rag.stages.triples import units
from insight_assets.core.methods.insight_rag.tasks import INSIGHT_RAG_COMPLETE
from insight_assets.core.runtime.stage import Check, CollectionScope, Stage
from insight_assets.core.runtime.stage_output import StageOutput, items_check, preview, skipped, table

ACCURACY = "insight_retriever_accuracy"


@dataclass(frozen=True)
class Measured:
    items: list[BenchmarkItem]  # the buried and multi-document questions asked
    outputs: dict  # each mode's outputs (see ``accuracy.retriever_outputs``)
    skipped: dict[str, str]  # modes left out, and why


def retriever_accuracy(scope: CollectionScope, settings: AccuracySettings) -> Measured:
    """§5.4, Table 3: each buried and multi-document question's gold subject and relation given to
    each mode of the insight retriever."""
    items = accuracy.asked_items(scope.upstream(BENCHMARK), settings.max_items)
    modes = settings.modes
    if scope.estimating:
        modes = [mode for mode in modes if mode == LLM]
    skipped: dict[str, str] = {}
    if not items or not modes:
        return Measured(items, {}, skipped)
    searched = tuple(mode for mode in RETRIEVER_MODES if mode in modes)
    setup = store.open_setup(
        scope.warehouse,
        scope.vectors_uri,
        scope.embedder,
        scope.collection,
        AnswersSettings(retriever_modes=list(searched or (PARAMETRIC,))),
        units(scope),
    )
    base = _base_model(scope, skipped) if BASE_MODEL in modes else None
    if PARAMETRIC in modes and setup.insights.parametric is None:
        skipped[PARAMETRIC] = setup.insights.parametric_missing
    outputs = accuracy.retriever_outputs(scope.client, items, setup.insights, modes, base)
    return Measured(items, outputs, skipped)


def _base_model(scope: CollectionScope, skipped: dict[str, str]) -> CausalLM | None:
    """The adapter's base model alone, or ``None`` with the reason in ``skipped``."""
    try:
        stored = store.load_adapter(scope.warehouse, scope.collection)
    except store.IndexMissing as error:
        skipped[BASE_MODEL] = str(error)
        return None
    if stored["status"] != store.TRAINED:
        skipped[BASE_MODEL] = stored["reason"]
        return None
    return CausalLM.open(base_model_source(stored["base_model_setting"]))


RETRIEVERS_SCORED = "retrievers_scored"


def output(scope: CollectionScope, settings: AccuracySettings, measured: Measured) -> StageOutput:
    rows = accuracy.accuracy_rows(measured.items, measured.outputs)
    why = "no buried or multi-document question: `insight_rag_benchmark` stored none (see its check)"
    return StageOutput(
        tables={"insight_retriever_accuracy": table(scope.collection, rows)},
        metadata={
            "dagster/row_count": len(rows),
            "questions": len(measured.items),
            "accuracy": preview(accuracy.accuracy_table(rows), accuracy.TABLE_COLUMNS, empty="None."),
            **skipped(measured.skipped),
        },
        checks=[items_check(RETRIEVERS_SCORED, len(rows), why)],
    )


ACCURACY_STAGE = Stage(
    ACCURACY,
    "insight_rag",
    "The insight retriever alone (§5.4, Table 3): for each buried and multi-document question, its "
    "gold subject + relation given to each mode (parametric, its base model, index, sentences, "
    "llm), scored by whether the output holds the gold object: exact match (buried), recall@10 (multi).",
    AccuracySettings,
    reads=(RETRIEVER, BENCHMARK.name),
    run=retriever_accuracy,
    output=output,
    tasks=(INSIGHT_RAG_COMPLETE,),
    checks=(Check(RETRIEVERS_SCORED, "Some question was asked of some retriever."),),
    embedder=True,
)
