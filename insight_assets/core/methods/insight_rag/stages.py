"""Insight-RAG's model-calling stages, one per asset (see ``core/runtime/stage.py``): the work the build and
the dry run share, and their declarations (``STAGES``); their settings models are in ``settings.py``. The insight
retriever's training (``insight_retriever``) calls no priced model and is not a stage.

A dry run prices only what calls the configured model: the ``parametric`` mode (the adapter the
build trains) and the base model run here and cost nothing, and loading them would mean loading
(or training) a model, so a dry run leaves them out.
"""

from __future__ import annotations

from dataclasses import dataclass

from insight_assets.core.runtime.stage import Check, CollectionScope, NothingToDo, Stage

from . import accuracy, collection_benchmark, outputs, store
from .benchmark import Benchmark, BenchmarkItem
from .causal_lm import CausalLM, base_model_source
from .collection import ChunkTriples, first_chunks, phrase_questions, read_triples
from .pipeline import Identification, MethodAnswer, Setup, answer, identify
from .schemas import (
    BASE_MODEL,
    BURIED,
    KINDS,
    LLM,
    PARAMETRIC,
    RETRIEVER_MODES,
)
from .settings import PROFILE, AccuracySettings, AnswersSettings, BenchmarkSettings, TriplesSettings
from .tasks import ANSWER_TASKS, BENCHMARK_TASKS, INSIGHT_RAG_COMPLETE, TRIPLE_TASKS

TRIPLES, BENCHMARK = "knowledge_triples", "insight_rag_benchmark"
ANSWERS, ACCURACY = "insight_rag_answers", "insight_retriever_accuracy"
# The parametric retriever's training: an asset of its own (not a stage: it calls no priced model).
RETRIEVER = "insight_retriever"


def triples(scope: CollectionScope, settings: TriplesSettings) -> ChunkTriples:
    """The triples of the first ``max_chunks_per_paper`` chunks of each paper, sentence by sentence."""
    rows = first_chunks(store.triple_chunks(scope.warehouse, scope.collection), settings.max_chunks_per_paper)
    if not rows:
        raise NothingToDo(f"no {PROFILE} chunks to read triples from.")
    read = read_triples(scope.client, rows)
    if not read.sentences:
        raise NothingToDo("no whole sentence in its chunks to read triples from.")
    scope.plan(TRIPLES, read.triples)
    return read


@dataclass(frozen=True)
class Benchmarked:
    benchmark: Benchmark  # every triple's fate
    items: list[BenchmarkItem]  # the questions, phrased


def benchmark(scope: CollectionScope, settings: BenchmarkSettings) -> Benchmarked:
    """Buried, multi-document and matching items from the triples (none: matching items only) and
    the citation graph, their questions phrased by the model."""
    read = scope.upstream(TRIPLES, lambda: store.load_triples(scope.warehouse, scope.collection))
    built = collection_benchmark(scope.warehouse, scope.collection, read, settings)
    items = phrase_questions(scope.client, built, read)
    scope.plan(BENCHMARK, items)
    return Benchmarked(built, items)


def benchmark_items(scope: CollectionScope) -> list[BenchmarkItem]:
    return scope.upstream(BENCHMARK, lambda: store.load_benchmark(scope.warehouse, scope.collection))


def first_of_each_kind(items: list[BenchmarkItem], max_items: int | None) -> list[BenchmarkItem]:
    """All ``items``, or the first ``max_items`` of each kind."""
    if max_items is None:
        return items
    return [item for kind in KINDS for item in [i for i in items if i.kind == kind][:max_items]]


@dataclass(frozen=True)
class Answered:
    items: list[BenchmarkItem]
    setup: Setup
    identified: list[Identification]
    answers: list[MethodAnswer]


def answers(scope: CollectionScope, answer_settings: AnswersSettings) -> Answered | None:
    """Each item's identified insights and every method's answer; ``None`` without items (or, in a
    dry run, with no mode that calls the model). ``IndexMissing`` before the triples are indexed."""
    items = first_of_each_kind(benchmark_items(scope), answer_settings.max_items)
    settings = answer_settings
    if scope.estimating:
        modes = [mode for mode in settings.retriever_modes if mode != PARAMETRIC]
        settings = settings.model_copy(update={"retriever_modes": modes})
    if not items or not settings.retriever_modes:
        return None
    setup = store.open_setup(scope.warehouse, scope.vectors_uri, scope.embedder, scope.collection, settings)
    identified = identify(scope.client, items, setup)
    answered = answer(scope.client, items, identified, setup, answer_settings.baselines)
    return Answered(items, setup, identified, answered)


def answer_for(scope: CollectionScope, question: str, mode: str) -> Answered:
    """Insight-RAG for one question: the answers stage on a scope given it (as a buried question),
    with the settings the collection was built with and the retriever ``mode`` asked for; its own
    answer, no baselines."""
    item = BenchmarkItem(item_id="ask", kind=BURIED, question=question)
    scope.give(BENCHMARK, [item])
    built = scope.built_settings(ANSWERS, AnswersSettings)
    return answers(
        scope, built.model_copy(update={"retriever_modes": [mode], "max_items": None, "baselines": False})
    )


@dataclass(frozen=True)
class Measured:
    items: list[BenchmarkItem]  # the buried and multi-document questions asked
    outputs: dict  # each mode's outputs (see ``accuracy.retriever_outputs``)
    skipped: dict[str, str]  # modes left out, and why


def retriever_accuracy(scope: CollectionScope, settings: AccuracySettings) -> Measured:
    """§5.4, Table 3: each buried and multi-document question's gold subject and relation given to
    each mode of the insight retriever."""
    items = accuracy.asked_items(benchmark_items(scope), settings.max_items)
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


STAGES = (
    Stage(
        TRIPLES,
        "insight_rag",
        "(subject, relation, object) triples of every ``xsum`` chunk, each with its chunk and sentence, "
        "normalised (case, whitespace, lemmatised relation) and deduplicated per paper; offline by a "
        "rule-based extractor. The triples and the collection's sentences are embedded into LanceDB "
        "(their own table) for the insight retriever.",
        TriplesSettings,
        reads=("chunk_embeddings",),
        run=triples,
        output=outputs.triples,
        tasks=TRIPLE_TASKS,
        checks=(
            Check(
                outputs.TRIPLES_FOUND,
                "The extractor found some triple; without one only the sentences are indexed.",
            ),
        ),
        kinds=("duckdb", "lancedb"),
        code_version="2",
        embedder=True,
        outputs_present=lambda vectors_uri, collection: store.unit_vectors(vectors_uri).exists(collection),
    ),
    Stage(
        BENCHMARK,
        "insight_rag",
        "Deeply buried and multi-document questions from the collection's triples (phrased by a task "
        "asking about the object; offline: templates) and citation-recommendation pairs from its "
        "citation graph, with gold answers and documents. Every triple's fate is kept: the item it "
        "became or why it was dropped.",
        BenchmarkSettings,
        reads=(TRIPLES, "citations"),
        run=benchmark,
        output=outputs.benchmark,
        tasks=BENCHMARK_TASKS,
        checks=(
            Check(outputs.HAS_ITEMS, "Some triple became a question, or some citation pair a matching item."),
        ),
    ),
    Stage(
        ANSWERS,
        "insight_rag",
        "The identified insights of every benchmark item, and the answers of Insight-RAG (each "
        "retriever mode), RAG with k chunks and no retrieval, with their contexts' sizes and the "
        "retrieval rankings they came from.",
        AnswersSettings,
        reads=(BENCHMARK, RETRIEVER),
        run=answers,
        output=outputs.answers,
        tasks=ANSWER_TASKS,
        checks=(
            Check(
                outputs.CITE_GIVEN,
                "Every citation of every answer is a passage (insight or chunk) its method was given; an "
                "invented alias, or a writer rejected for citing sources it was not given, fails it.",
            ),
        ),
        embedder=True,
    ),
    Stage(
        ACCURACY,
        "insight_rag",
        "The insight retriever alone (§5.4, Table 3): for each buried and multi-document question, its "
        "gold subject + relation given to each mode (parametric, its base model, index, sentences, "
        "llm), scored by whether the output holds the gold object: exact match (buried), recall@10 (multi).",
        AccuracySettings,
        reads=(RETRIEVER, BENCHMARK),
        run=retriever_accuracy,
        output=outputs.retriever_accuracy,
        tasks=(INSIGHT_RAG_COMPLETE,),
        checks=(Check(outputs.RETRIEVERS_SCORED, "Some question was asked of some retriever."),),
        embedder=True,
    ),
)
