"""Insight-RAG (Pezeshkpour & Hruschka et al.): insight identifier -> insight retriever ->
response generator, with the paper's triple-based benchmark built from each collection.

1. *Triples* (§3, ``triples.py``): (subject, relation, object) per ``xsum`` chunk sentence,
   normalised and deduplicated; offline a rule-based extractor (the paper uses GPT-4o mini).
2. *Benchmark* (§3, ``benchmark.py``): deeply buried, multi-document and matching items, each
   dropped triple with its reason; questions phrased by a task (offline: templates).
3. *Insight-RAG* (§2, ``pipeline.py``): the identifier (Appendix A.1, temperature 0) returns
   fragments with their multiplicity; the retriever (``retriever.py``: ``parametric``, the paper's
   LM continually pre-trained with LoRA in ``cpt.py``; or ``index``, ``sentences``, ``llm``)
   completes each into insights (1 per single-answer fragment, 10 per multi-answer one, within 100
   tokens); the generator answers from the question and the insights (A.3), citing their chunks.
4. *Baselines* (§5): conventional RAG with k = 1, 3, 5, 10 chunks, and no retrieval.
5. *Scores* (§4, §5.4, ``scores.py``): exact match, token F1, matching accuracy, Hits@50 and MRR;
   each retriever alone on the gold fragments (Table 3, ``accuracy.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from insight_assets.core.ingestion.ingest import load_documents

from ...citations import citation_links
from . import store  # declares the method's warehouse tables
from .benchmark import Benchmark, BenchmarkItem, build_questions, matching_pairs
from .collection import phrase_questions, read_triples
from .pipeline import Identification, MethodAnswer, Setup, answer, identify
from .retriever import InsightRetriever, RetrievedInsight, Sentence
from .settings import PROFILE, AccuracySettings, AnswersSettings, BenchmarkSettings, TriplesSettings
from .tasks import ANSWER_TASKS, BENCHMARK_TASKS, TRIPLE_TASKS
from .triples import EXTRACTOR, Triple, extract

if TYPE_CHECKING:
    from insight_assets.core.storage.stores import Warehouse

TASKS = TRIPLE_TASKS + BENCHMARK_TASKS + ANSWER_TASKS


def build_benchmark(
    triples: list[Triple],
    bodies: dict[str, str],
    citations: list[tuple[str, str]],
    settings: BenchmarkSettings | None = None,
) -> Benchmark:
    """The buried and multi-document items (questions not yet phrased) and the matching pairs."""
    settings = settings or BenchmarkSettings()
    benchmark = build_questions(
        triples,
        bodies,
        max_buried=settings.max_buried,
        max_multi=settings.max_multi,
        seed=settings.seed,
        vague_share=settings.vague_share,
    )
    benchmark.items += matching_pairs(
        sorted(bodies), citations, max_pairs=settings.max_matching, seed=settings.seed
    )
    return benchmark


def collection_benchmark(
    warehouse: Warehouse, collection: str, triples: list[Triple], settings: BenchmarkSettings
) -> Benchmark:
    """The benchmark's items from ``triples``, the papers' full texts and the citation graph, its
    questions not yet phrased."""
    bodies = {d.doc_id: d.text[: d.body_end] for d in load_documents(warehouse, collection)}
    return build_benchmark(triples, bodies, citation_links(warehouse, collection), settings)


__all__ = [
    "EXTRACTOR",
    "PROFILE",
    "TASKS",
    "AccuracySettings",
    "AnswersSettings",
    "Benchmark",
    "BenchmarkItem",
    "BenchmarkSettings",
    "Identification",
    "InsightRetriever",
    "MethodAnswer",
    "RetrievedInsight",
    "Sentence",
    "Setup",
    "Triple",
    "TriplesSettings",
    "answer",
    "build_benchmark",
    "collection_benchmark",
    "extract",
    "identify",
    "phrase_questions",
    "read_triples",
    "store",
]
