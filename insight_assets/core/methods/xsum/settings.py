"""XSum's settings, one model per stage, which the engine reads itself: the paper's defaults, each
written once with its bound (§3.2 questions, §3.4 retrieval and answers, §3.5 the editor and the
baselines, §4.2 the judge)."""

from __future__ import annotations

from pydantic import Field, model_validator

from insight_assets.core.runtime.stage_settings import JudgedSettings, StageSettings

from ...retrieval.rerank import DEFAULT_RERANKER, RERANKERS
from ...retrieval.search import RETRIEVAL_MODES
from .schemas import (
    ABSTRACT_FALLBACK_TOKENS,
    CANDIDATES,
    MAX_TARGET_PAPERS,
    MIN_CITED_FOR_EVALUATION,
    QUESTIONS_PER_PAPER,
    RETRIEVAL_SCOPES,
    TOP_N,
)


class QuestionsSettings(StageSettings):
    """§3.2: k = 5 questions per paper from its title and abstract; temperature 0.3, top-p 0.95."""

    questions_per_paper: int = Field(default=QUESTIONS_PER_PAPER, ge=1, description="§3.2: k = 5.")
    abstract_fallback_tokens: int = Field(
        default=ABSTRACT_FALLBACK_TOKENS, ge=20, description="Body tokens read when a paper has no abstract."
    )


class AnswersSettings(StageSettings):
    """§3.4: top 100 chunks by cosine, reranked to 20 (late interaction), answers at temperature
    0.3, top-p 0.95; the public code's refine pass off. Targets of up to 10 papers."""

    retrieval_scope: str = Field(default="paper", description=f"One of {', '.join(RETRIEVAL_SCOPES)}.")
    candidates: int = Field(default=CANDIDATES, ge=1, description="§3.4: chunks retrieved per question.")
    top_n: int = Field(default=TOP_N, ge=1, description="§3.4: chunks kept after the rerank.")
    retrieval_mode: str = Field(default="dense", description=f"One of {', '.join(RETRIEVAL_MODES)}.")
    reranker: str = Field(default=DEFAULT_RERANKER, description=f"One of {', '.join(RERANKERS)}.")
    refine: bool = Field(default=False, description="The public code's second pass over the same context.")
    max_target_papers: int = Field(default=MAX_TARGET_PAPERS, ge=1, description="Papers per target, at most.")
    max_targets: int | None = Field(
        default=None,
        ge=1,
        description="Targets summarised, at most, in the order they are found; unset: every target.",
    )
    min_cited_for_evaluation: int = Field(
        default=MIN_CITED_FOR_EVALUATION,
        description="Collection papers a related-work section must cite to make an evaluation target.",
    )

    @model_validator(mode="after")
    def _valid(self) -> AnswersSettings:
        for name, allowed in (
            ("retrieval_scope", RETRIEVAL_SCOPES),
            ("retrieval_mode", RETRIEVAL_MODES),
            ("reranker", RERANKERS),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, not {getattr(self, name)!r}")
        if self.top_n > self.candidates:
            raise ValueError(f"top_n ({self.top_n}) cannot exceed candidates ({self.candidates})")
        return self


class SummariesSettings(StageSettings):
    """§3.5: the editor at temperature 0.3, top-p 0.95, max_tokens sized to its input; the baselines
    plain RAG (topic as query, top 20 by cosine) and abstracts only, on every target."""

    baselines: bool = Field(
        default=True, description="Also write the plain-RAG and abstracts-only summaries."
    )
    plain_rag_k: int = Field(default=TOP_N, ge=1, description="Chunks the plain-RAG baseline reads.")
    pipeline_1_top_n: int = Field(
        default=TOP_N, ge=1, description="Chunks Pipeline 1 summarises, the ranker's best."
    )
    pipeline_2_candidates: int = Field(
        default=CANDIDATES,
        ge=1,
        description="Chunks Pipeline 2 retrieves on the title before its LLM re-rank.",
    )


class ScoresSettings(JudgedSettings):
    """§4.2's metrics; the judge may be another model than the generator's (the paper judged with
    Phi-3 what GPT-4o-mini wrote, §4.3)."""
