"""Insight-RAG (Pezeshkpour & Hruschka et al.): insight identifier -> insight retriever ->
response generator, with the paper's triple-based benchmark built from each collection.

1. *Triples* (§3, ``triples.py``): (subject, relation, object) per ``xsum`` chunk sentence,
   normalised and deduplicated; offline a rule-based extractor (the paper uses GPT-4o mini).
2. *Benchmark* (§3, ``benchmark.py``): deeply buried, multi-document and matching items, each
   dropped triple with its reason; questions phrased by a task (offline: templates).
3. *Insight-RAG* (§2, ``pipeline.py``): the identifier (Appendix A.1, temperature 0) returns
   fragments with their multiplicity; the retriever (``retriever.py``: ``index``, ``sentences`` or
   ``llm``; the paper's continually pre-trained LLM is not built, see there) completes each into
   insights (1 per single-answer fragment, 10 per multi-answer one, within 100 tokens); the
   generator answers from the question and the insights (A.3), citing their chunks.
4. *Baselines* (§5): conventional RAG with k = 1, 3, 5, 10 chunks, and no retrieval.
5. *Scores* (§4, §5.4, ``scores.py``): exact match, token F1, matching accuracy, Hits@50 and MRR.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...retrieval.search import RETRIEVAL_MODES
from .benchmark import Benchmark, BenchmarkItem, build_questions, matching_pairs
from .pipeline import Identification, MethodAnswer, Setup, answer, identify
from .retriever import InsightRetriever, RetrievedInsight, Sentence
from .schemas import (
    DEFAULT_RETRIEVER_MODES,
    MAX_BURIED,
    MAX_MATCHING,
    MAX_MULTI,
    RAG_KS,
    RETRIEVER_MODES,
    SEED,
    VAGUE_DOCUMENT_SHARE,
)
from .tasks import ANSWER_TASKS, BENCHMARK_TASKS, TRIPLE_TASKS
from .triples import EXTRACTOR, Triple, extract

PROFILE = "xsum"
TASKS = TRIPLE_TASKS + BENCHMARK_TASKS + ANSWER_TASKS


@dataclass(frozen=True)
class BenchmarkSettings:
    """§3's rules with the issue's sizes (up to 200 / 100 / 100 per collection)."""

    max_buried: int = MAX_BURIED
    max_multi: int = MAX_MULTI
    max_matching: int = MAX_MATCHING
    seed: int = SEED
    vague_share: float = VAGUE_DOCUMENT_SHARE

    def __post_init__(self) -> None:
        for name in ("max_buried", "max_multi", "max_matching"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be 0 or more")
        if not 0.0 < self.vague_share <= 1.0:
            raise ValueError("vague_share must lie in (0, 1]")


@dataclass(frozen=True)
class AnswerSettings:
    """Which retriever modes and RAG k values answer; how RAG and the retriever search."""

    retriever_modes: tuple[str, ...] = DEFAULT_RETRIEVER_MODES
    rag_ks: tuple[int, ...] = RAG_KS
    rag_mode: str = "dense"
    insight_search_mode: str = "hybrid"

    def __post_init__(self) -> None:
        unknown = [m for m in self.retriever_modes if m not in RETRIEVER_MODES]
        if unknown or not self.retriever_modes:
            raise ValueError(f"retriever_modes must be some of {', '.join(RETRIEVER_MODES)}, not {unknown}")
        if not self.rag_ks or min(self.rag_ks) < 1:
            raise ValueError("rag_ks must be positive chunk counts")
        for name in ("rag_mode", "insight_search_mode"):
            if getattr(self, name) not in RETRIEVAL_MODES:
                raise ValueError(f"{name} must be one of {', '.join(RETRIEVAL_MODES)}")


def build_benchmark(
    triples: list[Triple],
    bodies: dict[str, str],
    citations: list[tuple[str, str]],
    settings: BenchmarkSettings = BenchmarkSettings(),
) -> Benchmark:
    """The buried and multi-document items (questions not yet phrased) and the matching pairs."""
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


__all__ = [
    "EXTRACTOR",
    "PROFILE",
    "TASKS",
    "AnswerSettings",
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
    "answer",
    "build_benchmark",
    "extract",
    "identify",
]
