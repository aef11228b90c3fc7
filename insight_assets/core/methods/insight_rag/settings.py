"""Insight-RAG's settings: the chunk profile it reads, the benchmark's sizes, how it answers."""

from __future__ import annotations

from dataclasses import dataclass

from ...chunking import PASSAGE
from ...retrieval.search import RETRIEVAL_MODES
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

PROFILE = PASSAGE


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
