"""Insight-RAG's settings, one model per stage, which the engine reads itself: the chunk profile it
reads, the triples read, the benchmark's sizes, how it answers and what the accuracy table scores."""

from __future__ import annotations

from pydantic import Field, model_validator

from insight_assets.core.ingestion.chunking import PASSAGE
from insight_assets.core.runtime.stage_settings import StageSettings

from ...retrieval.search import RETRIEVAL_MODES
from .schemas import (
    ACCURACY_MODES,
    BASE_MODEL,
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


class TriplesSettings(StageSettings):
    """§3, Figure 2 step 1: triples of every ``xsum`` chunk's whole sentences."""

    max_chunks_per_paper: int | None = Field(
        default=None,
        ge=1,
        description="Read triples from at most this many chunks of each paper, from its start (one "
        "model call a chunk); unset: every chunk, as the paper does.",
    )


class AnswersSettings(StageSettings):
    """§2 and §5: Insight-RAG with each retriever mode, RAG with k = 1, 3, 5, 10 chunks, no context."""

    retriever_modes: list[str] = Field(
        default=list(DEFAULT_RETRIEVER_MODES),
        description=f"Insight-retriever modes to answer with: some of {', '.join(RETRIEVER_MODES)}.",
    )
    rag_ks: list[int] = Field(default=list(RAG_KS), description="RAG's chunk counts.")
    rag_mode: str = Field(default="dense", description=f"RAG's retrieval: {', '.join(RETRIEVAL_MODES)}.")
    insight_search_mode: str = Field(
        default="hybrid", description="How the retriever searches triples and sentences."
    )
    max_items: int | None = Field(
        default=None, ge=1, description="Only the first N items per kind (cost control)."
    )
    baselines: bool = Field(default=True, description="Also answer with RAG at each k and with no retrieval.")

    @model_validator(mode="after")
    def _valid(self) -> AnswersSettings:
        unknown = [mode for mode in self.retriever_modes if mode not in RETRIEVER_MODES]
        if unknown or not self.retriever_modes:
            raise ValueError(f"retriever_modes must be some of {', '.join(RETRIEVER_MODES)}, not {unknown}")
        if not self.rag_ks or min(self.rag_ks) < 1:
            raise ValueError("rag_ks must be positive chunk counts")
        for name in ("rag_mode", "insight_search_mode"):
            if getattr(self, name) not in RETRIEVAL_MODES:
                raise ValueError(f"{name} must be one of {', '.join(RETRIEVAL_MODES)}")
        return self


class AccuracySettings(StageSettings):
    """Table 3: every retriever mode given the gold subject + relation of each question."""

    modes: list[str] = Field(
        default=list(ACCURACY_MODES),
        description=f"Modes scored: some of {', '.join(ACCURACY_MODES)} ('{BASE_MODEL}': the parametric "
        "retriever's base model without its adapter).",
    )
    max_items: int | None = Field(
        default=30,
        ge=1,
        description="Questions of each kind (buried, multi-document) asked, at most (the base model writes "
        "its full 100 tokens, ten beams for a multi-document one); unset: all.",
    )

    @model_validator(mode="after")
    def _valid(self) -> AccuracySettings:
        unknown = sorted(set(self.modes) - set(ACCURACY_MODES))
        if unknown or not self.modes:
            raise ValueError(f"modes must be some of {', '.join(ACCURACY_MODES)}")
        return self
