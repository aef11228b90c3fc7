"""Insight-RAG for one question: the answers stage run for it."""

from __future__ import annotations

from insight_assets.core.methods.insight_rag.benchmark import BenchmarkItem
from insight_assets.core.methods.insight_rag.schemas import BURIED
from insight_assets.core.methods.insight_rag.settings import AnswersSettings
from insight_assets.core.methods.insight_rag.stages.answers import ANSWERS, ANSWERS_STAGE, Answered
from insight_assets.core.methods.insight_rag.stages.benchmark import BENCHMARK
from insight_assets.core.runtime.stage import CollectionScope


def answer_for(scope: CollectionScope, question: str, mode: str) -> Answered:
    """Insight-RAG for one question: the answers stage run for it (as a buried question), with the
    settings the collection was built with and the retriever ``mode`` asked for; its own answer, no
    baselines."""
    item = BenchmarkItem(item_id="ask", kind=BURIED, question=question)
    built = scope.built_settings(ANSWERS, AnswersSettings)
    return scope.for_question({BENCHMARK: [item]}).run(
        ANSWERS_STAGE,
        built.model_copy(update={"retriever_modes": [mode], "max_items": None, "baselines": False}),
    )
