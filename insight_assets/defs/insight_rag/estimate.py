"""Insight-RAG's dry-run steps: triples, the benchmark's questions, and answers and the retrievers'
accuracy once the triples are indexed. The insight retriever's training calls no priced model."""

from dataclasses import replace

from insight_assets.app.dry_run import DryRun, EstimateStep
from insight_assets.core.index import IndexMissing
from insight_assets.core.methods import insight_rag
from insight_assets.core.methods.insight_rag import accuracy
from insight_assets.core.methods.insight_rag.collection import phrase_questions, read_triples
from insight_assets.core.methods.insight_rag.schemas import LLM, PARAMETRIC
from insight_assets.defs.insight_rag.answers import InsightRAGAnswersConfig
from insight_assets.defs.insight_rag.assets import InsightRAGBenchmarkConfig, InsightRAGTriplesConfig
from insight_assets.defs.insight_rag.retriever import InsightRetrieverAccuracyConfig


def _triples(config: InsightRAGTriplesConfig, run: DryRun) -> None:
    chunks = insight_rag.store.triple_chunks(run.storage.warehouse, run.collection)
    run.outputs["knowledge_triples"] = read_triples(run.client, chunks).triples


def _benchmark(config: InsightRAGBenchmarkConfig, run: DryRun) -> None:
    triples = run.output("knowledge_triples", [])
    if triples:
        benchmark = insight_rag.collection_benchmark(
            run.storage.warehouse, run.collection, triples, config.settings()
        )
        run.outputs["insight_rag_benchmark"] = phrase_questions(run.client, benchmark, triples)


def _indexed_setup(run: DryRun, settings: insight_rag.AnswerSettings) -> insight_rag.Setup | None:
    """What the answers search, once ``knowledge_triples`` is built (the dry run's own triples have no
    vectors to search); ``None`` before."""
    try:
        return insight_rag.store.open_setup(
            run.storage.warehouse,
            run.storage.vectors_uri,
            run.embedder.get_embedder(),
            run.collection,
            settings,
        )
    except IndexMissing:
        return None


def _answers(config: InsightRAGAnswersConfig, run: DryRun) -> None:
    """Priced once the collection's triples are indexed (``knowledge_triples`` built); the dry
    run's own triples have no vectors to search. The ``parametric`` mode's answers are left out:
    pricing them would mean loading (or training) the adapted model."""
    items = config.selected(run.output("insight_rag_benchmark", []))
    settings = config.settings()
    priced = tuple(mode for mode in settings.retriever_modes if mode != PARAMETRIC)
    if not priced:
        return
    setup = _indexed_setup(run, replace(settings, retriever_modes=priced)) if items else None
    if setup is None:
        return
    identified = insight_rag.identify(run.client, items, setup)
    insight_rag.answer(run.client, items, identified, setup)


def _accuracy(config: InsightRetrieverAccuracyConfig, run: DryRun) -> None:
    """Table 3's model calls: the ``llm`` mode's completions (the parametric modes run no priced call)."""
    items = accuracy.asked_items(run.output("insight_rag_benchmark", []), config.max_items)
    asked = items and LLM in config.modes
    setup = _indexed_setup(run, insight_rag.AnswerSettings(retriever_modes=(LLM,))) if asked else None
    if setup is None:
        return
    accuracy.retriever_outputs(run.client, items, setup.insights, [LLM])


ESTIMATE_STEPS = (
    EstimateStep("knowledge_triples", InsightRAGTriplesConfig, _triples),
    EstimateStep("insight_rag_benchmark", InsightRAGBenchmarkConfig, _benchmark),
    EstimateStep("insight_rag_answers", InsightRAGAnswersConfig, _answers),
    EstimateStep("insight_retriever_accuracy", InsightRetrieverAccuracyConfig, _accuracy),
)
