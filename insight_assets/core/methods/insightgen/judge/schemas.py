"""What judges read and answer with, and the rows their scores become."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from insight_assets.core.startup.lazy import LazyModel

CRITERIA_SET = ("novelty", "diversity", "relevance", "depth")
CRITERIA_SINGLE = ("novelty", "relevance", "depth")
DEFAULT_REPETITIONS = 10  # Appendix D: ten samples per question at insight level

Level = Literal["set", "insight"]

# The comparisons the paper made, each in prompts of its own, so that a judge never reads more
# methods at once than the paper's did: Table 2 (and 10), InsightGen against §5.1's four baselines;
# Table 4, InsightGen against RQ5's three advanced RAG pipelines.
JUDGE_PANELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("baselines", ("insightgen", "direct", "cot", "vector_topk", "vector_topk_cot")),
    ("advanced_rag", ("insightgen", "iterative_rag", "multi_query_rag", "agentic_rag")),
)
# Methods of neither panel (a plugged-in method) are compared with InsightGen in panels this large.
OTHER_PANEL_SIZE = 5


def judge_panels(methods: Sequence[str]) -> list[tuple[str, tuple[str, ...]]]:
    """The panels ``methods`` are judged in: each of the paper's with at least two of them, then the
    rest, a few at a time with InsightGen (``other``, ``other-2``, ...)."""
    panels = [
        (name, kept)
        for name, members in JUDGE_PANELS
        for kept in [tuple(method for method in members if method in methods)]
        if len(kept) >= 2
    ]
    placed = {method for _, members in JUDGE_PANELS for method in members}
    rest = sorted(set(methods) - placed)
    anchor = ("insightgen",) if "insightgen" in methods else ()
    size = OTHER_PANEL_SIZE - len(anchor)
    for number, start in enumerate(range(0, len(rest), size), start=1):
        members = anchor + tuple(rest[start : start + size])
        if len(members) >= 2:
            panels.append(("other" if number == 1 else f"other-{number}", members))
    return panels


@dataclass(frozen=True)
class MethodInsights:
    """One method's insights for one question, as the judge reads them (hook and body)."""

    method: str
    insights: tuple[str, ...]


class MethodScore(LazyModel):
    label: str = Field(description="The label of the method, exactly as shown.")
    novelty: float = Field(ge=0, le=5)
    diversity: float | None = Field(default=None, ge=0, le=5)
    relevance: float = Field(ge=0, le=5)
    depth: float = Field(ge=0, le=5)
    overall: float = Field(
        ge=0,
        le=5,
        description="The judge's own overall rating, 0-5, of the method's insights, based on the criteria.",
    )
    rationale: str = Field(description="Relative strengths and distinguishing features, briefly.")


class SetJudgement(LazyModel):
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
    panel: str = ""  # the comparison it was judged in (``JUDGE_PANELS``)
