"""Insight-RAG's model-calling stages, one per asset (see ``core/stage.py``): the work the build
and the dry run share. The insight retriever's training (``insight_retriever``) calls no priced
model and is not a stage.

A dry run prices only what calls the configured model: the ``parametric`` mode (the adapter the
build trains) and the base model run here and cost nothing, and loading them would mean loading
(or training) a model, so a dry run leaves them out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...stage import CollectionScope, NothingToDo
from . import accuracy, collection_benchmark, store
from .benchmark import Benchmark, BenchmarkItem
from .causal_lm import CausalLM, base_model_source
from .collection import ChunkTriples, first_chunks, phrase_questions, read_triples
from .pipeline import Identification, MethodAnswer, Setup, answer, identify
from .schemas import BASE_MODEL, KINDS, LLM, PARAMETRIC, RETRIEVER_MODES
from .settings import PROFILE, AnswerSettings, BenchmarkSettings

TRIPLES, BENCHMARK = "knowledge_triples", "insight_rag_benchmark"


def triples(scope: CollectionScope, max_chunks_per_paper: int | None) -> ChunkTriples:
    """The triples of the first ``max_chunks_per_paper`` chunks of each paper, sentence by sentence."""
    rows = first_chunks(store.triple_chunks(scope.warehouse, scope.collection), max_chunks_per_paper)
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


def answers(scope: CollectionScope, settings: AnswerSettings, max_items: int | None) -> Answered | None:
    """Each item's identified insights and every method's answer; ``None`` without items (or, in a
    dry run, with no mode that calls the model). ``IndexMissing`` before the triples are indexed."""
    items = first_of_each_kind(benchmark_items(scope), max_items)
    if scope.estimating:
        settings = replace(
            settings, retriever_modes=tuple(m for m in settings.retriever_modes if m != PARAMETRIC)
        )
    if not items or not settings.retriever_modes:
        return None
    setup = store.open_setup(scope.warehouse, scope.vectors_uri, scope.embedder, scope.collection, settings)
    identified = identify(scope.client, items, setup)
    return Answered(items, setup, identified, answer(scope.client, items, identified, setup))


@dataclass(frozen=True)
class Measured:
    items: list[BenchmarkItem]  # the buried and multi-document questions asked
    outputs: dict  # each mode's outputs (see ``accuracy.retriever_outputs``)
    skipped: dict[str, str]  # modes left out, and why


def retriever_accuracy(scope: CollectionScope, modes: list[str], max_items: int | None) -> Measured:
    """§5.4, Table 3: each buried and multi-document question's gold subject and relation given to
    each mode of the insight retriever."""
    items = accuracy.asked_items(benchmark_items(scope), max_items)
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
        AnswerSettings(searched or (PARAMETRIC,)),
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
