"""Insight-RAG's settings: the chunk profile it reads, the benchmark's sizes, how it answers."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from ...chunking import PASSAGE
from ...retrieval.search import RETRIEVAL_MODES
from ...stage_settings import StageSettings
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


class BenchmarkSettings(StageSettings):
    """§3's rules; the issue's sizes (up to 200 buried, 100 multi-document, 100 matching)."""

    max_buried: int = Field(default=MAX_BURIED, ge=0, description="Buried questions, at most.")
    max_multi: int = Field(default=MAX_MULTI, ge=0, description="Multi-document questions.")
    max_matching: int = Field(default=MAX_MATCHING, ge=0, description="Matching pairs (1:1).")
    seed: int = Field(default=SEED, description="Sampling seed.")
    vague_share: float = Field(
        default=VAGUE_DOCUMENT_SHARE,
        gt=0.0,
        le=1.0,
        description="A subject whose every word is in this share of the papers is too vague to ask about.",
    )


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
