"""ConTReGen's settings, one model per stage, which the engine reads itself: §2.1's trees (whose
retrieval, ``top_k`` and ``retrieval_mode``, the answers' synthesis and baselines use too), §2.2's
answers and baselines, and the judge."""

from __future__ import annotations

from pydantic import Field, model_validator

from insight_assets.core.runtime.stage_settings import JudgedSettings, StageSettings

from ...curation.records import GENERATED, USER
from ...retrieval.search import RETRIEVAL_MODES
from .schemas import (
    ANSWER_WORDS,
    CONTEXT_TOKENS,
    ITERATIONS,
    MAX_DEPTH,
    MAX_SUB_QUESTIONS,
    NEED_SIMILARITY,
    RELEVANCE_RATIO,
    REPEAT_SIMILARITY,
    TOP_K,
)

# The smallest prompt budget that holds k passages, five child summaries and the template.
MIN_CONTEXT_TOKENS = 2000
QUESTION_SOURCES = ("all", GENERATED, USER)


class TreesSettings(StageSettings):
    """§2.1 with §4.3's and Appendix A.1's defaults: depth 2, 5 sub-questions per plan; planning
    and verification at temperature 0. The thresholds are the offline verifier's. The retrieval
    (``top_k``, ``retrieval_mode``) is also the answers' and the baselines'."""

    top_k: int = Field(default=TOP_K, ge=1, description="§4.3: passages per retrieval (k = 5).")
    retrieval_mode: str = Field(default="dense", description=f"One of {', '.join(RETRIEVAL_MODES)}.")
    questions: str = Field(default="all", description=f"Which questions: {', '.join(QUESTION_SOURCES)}.")
    max_questions: int | None = Field(
        default=20, ge=1, description="Only the first N questions (cost control); null for all."
    )
    max_depth: int = Field(default=MAX_DEPTH, ge=0, description="§4.3: depth 2.")
    max_sub_questions: int = Field(default=MAX_SUB_QUESTIONS, ge=1, description="Appendix A.1: 5 per plan.")
    need_similarity: float = Field(
        default=NEED_SIMILARITY,
        ge=-1.0,
        le=1.0,
        description="Offline: a sub-question's least cosine with the question to be needed.",
    )
    repeat_similarity: float = Field(
        default=REPEAT_SIMILARITY,
        ge=-1.0,
        le=1.0,
        description="Offline: the cosine with an explored question at which a sub-question repeats it.",
    )
    relevance_ratio: float = Field(
        default=RELEVANCE_RATIO,
        ge=-1.0,
        le=1.0,
        description="Offline: a passage is relevant at this share of the question's best passage's cosine.",
    )
    reference_questions: int = Field(
        default=3, ge=0, description="Also ask this many reference paragraphs' topics, scored against them."
    )

    @model_validator(mode="after")
    def _valid(self) -> TreesSettings:
        if self.questions not in QUESTION_SOURCES:
            raise ValueError(f"questions must be one of {', '.join(QUESTION_SOURCES)}")
        if self.retrieval_mode not in RETRIEVAL_MODES:
            raise ValueError(
                f"retrieval_mode must be one of {', '.join(RETRIEVAL_MODES)}, not {self.retrieval_mode!r}"
            )
        return self


class AnswersSettings(StageSettings):
    """§2.2: synthesis at temperature 0.3, a ~300-word root answer, prompts cut to
    ``context_tokens``; the baselines RetGen, budget-matched RetGen and IterRetGen (5 iterations),
    retrieving as the trees did."""

    baselines: bool = Field(default=True, description="Also answer with the three baselines.")
    iterations: int = Field(default=ITERATIONS, ge=1, description="IterRetGen's rounds.")
    answer_words: int = Field(default=ANSWER_WORDS, ge=50, description="The answer's length.")
    context_tokens: int = Field(
        default=CONTEXT_TOKENS,
        ge=MIN_CONTEXT_TOKENS,
        description="Each synthesis prompt's budget for passages and summaries, in tokens.",
    )


class ScoresSettings(JudgedSettings):
    """The judge may be another model than the generator's."""
