"""What judges read and answer with, and the rows their scores become."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

CRITERIA_SET = ("novelty", "diversity", "relevance", "depth")
CRITERIA_SINGLE = ("novelty", "relevance", "depth")
DEFAULT_REPETITIONS = 10  # Appendix D: ten samples per question at insight level

Level = Literal["set", "insight"]


@dataclass(frozen=True)
class MethodInsights:
    """One method's insights for one question, as the judge reads them (hook and body)."""

    method: str
    insights: tuple[str, ...]


class MethodScore(BaseModel):
    label: str = Field(description="The label of the method, exactly as shown.")
    novelty: float = Field(ge=0, le=5)
    diversity: float | None = Field(default=None, ge=0, le=5)
    relevance: float = Field(ge=0, le=5)
    depth: float = Field(ge=0, le=5)
    rationale: str = Field(description="Relative strengths and distinguishing features, briefly.")


class SetJudgement(BaseModel):
    scores: list[MethodScore]


@dataclass(frozen=True)
class JudgeRow:
    """One judge's scores for one method on one question (and repetition, at insight level).

    ``label`` is the anonymous label the judge saw and ``insight_index`` the sampled insight (insight
    level only), for auditing position effects and samples."""

    judge: str
    level: Level
    question_id: str
    method: str
    novelty: float
    diversity: float | None
    relevance: float
    depth: float
    overall: float
    rationale: str
    repetition: int | None = None
    label: str = ""
    insight_index: int | None = None
