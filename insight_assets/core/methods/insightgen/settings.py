"""InsightGen's settings, one model per stage, which the engine reads itself: the insights' (which
methods run, §5.1's neighbourhood selection, Appendix C's generation) and the judges' (Appendix D)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from insight_assets.core.runtime.stage_settings import JudgeModel, StageSettings

from .schemas import INSIGHT_METHODS

LEVELS = ("set", "insight")


class InsightsSettings(StageSettings):
    """Defaults from InsightGen: top-k 5 neighbouring clusters within 2 hops, up to five insights,
    generation at temperature 0.7 with 4,000 output tokens (Appendix C)."""

    methods: list[str] = Field(
        default=list(INSIGHT_METHODS), description=f"Any of {', '.join(INSIGHT_METHODS)}."
    )
    top_k: int = Field(default=5, ge=0, description="Related clusters added to the answer's own.")
    max_hops: int = Field(default=2, ge=0, description="How far on the graph related clusters may be.")
    token_budget: int = Field(
        default=12000,
        ge=0,
        description="Context tokens per question for every method (the baselines' fixed budget too).",
    )
    max_insights: int = Field(default=5, ge=1, description="Insights per method and question.")
    max_questions: int | None = Field(
        default=None, ge=1, description="Only the first N question-answer pairs (cost control)."
    )
    baseline_documents: Literal["kept", "current"] = Field(
        default="kept",
        description=(
            "On a rebuild, a question whose question, answer and InsightGen context did not change: "
            "its baselines read the documents they read at the last build ('kept': a paper added "
            "since changes none of its prompts, so its insights and judgements are reused) or the "
            "collection as it is now ('current': one more paper changes every Direct and CoT prompt "
            "and so every judgement)."
        ),
    )
    temperature: float | None = Field(default=0.7, description="Appendix C: temperature 0.7.")
    max_tokens: int | None = Field(default=4000, description="Appendix C: max_tokens 4000.")

    @model_validator(mode="after")
    def _valid(self) -> InsightsSettings:
        unknown = sorted(set(self.methods) - set(INSIGHT_METHODS))
        if unknown or not self.methods:
            raise ValueError(f"unknown or no methods {unknown}; choose from {', '.join(INSIGHT_METHODS)}")
        return self


class JudgeSettings(StageSettings):
    """Appendix D: set-level and insight-level judging (ten repetitions), methods shuffled per
    question with a seed. The paper used two judges (Gemini 2.5 Flash and Claude 4 Sonnet)."""

    judges: list[JudgeModel] = Field(
        default=[], description="Judges to run; empty: one judge, the `llm` resource's model."
    )
    levels: list[str] = Field(default=list(LEVELS), description="'set' and/or 'insight'.")
    repetitions: int = Field(default=10, ge=1, description="Insight-level samples per question.")
    seed: int = Field(default=42, description="Seed of the method order and of the sampled insights.")

    @model_validator(mode="after")
    def _valid(self) -> JudgeSettings:
        unknown = sorted(set(self.levels) - set(LEVELS))
        if unknown or not self.levels:
            raise ValueError(f"unknown or no judging levels {unknown}; use 'set' and/or 'insight'")
        return self

    def panel(self) -> list[JudgeModel]:
        return list(self.judges) or [JudgeModel()]
