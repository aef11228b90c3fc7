"""InsightGen's vocabulary: the methods, insight types and the models its tasks answer with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from pydantic import Field

from insight_assets.core.startup.lazy import LazyModel

InsightType = Literal[
    "missing information",
    "new idea",
    "alternate framing",
    "mind map",
    "potential issue or objection",
    "interesting fact",
    "short quiz",
    "real-world application or analogy",
    "tradeoff",
]
INSIGHT_TYPES: tuple[str, ...] = get_args(InsightType)

# §5.1's baselines, then RQ5's advanced RAG pipelines (``rag_baselines.py``), which read their
# context with InsightGen's chain-of-thought prompts (the paper: "the same configurations").
INSIGHT_METHODS = (
    "insightgen",
    "direct",
    "cot",
    "vector_topk",
    "vector_topk_cot",
    "iterative_rag",
    "multi_query_rag",
    "agentic_rag",
)
CHAIN_OF_THOUGHT_METHODS = frozenset(
    {"insightgen", "cot", "vector_topk_cot", "iterative_rag", "multi_query_rag", "agentic_rag"}
)

DEFAULT_MAX_INSIGHTS = 5
# Appendix C: GPT-4o generated insights with temperature 0.7 and max_tokens 4000.
GENERATION_TEMPERATURE = 0.7
GENERATION_MAX_TOKENS = 4000


def uses_chain_of_thought(method: str) -> bool:
    if method not in INSIGHT_METHODS:
        raise ValueError(f"unknown method {method!r}: choose one of {', '.join(INSIGHT_METHODS)}")
    return method in CHAIN_OF_THOUGHT_METHODS


@dataclass(frozen=True)
class ContextPassage:
    """A passage an insight may draw on, shown to the model as ``[chunk_id] text``."""

    chunk_id: str
    text: str


class UserIntent(LazyModel):
    intent: str = Field(min_length=1, description="What the asker wants to understand, decide or do.")
    persona: str = Field(min_length=1, description="Who is most likely asking, in a few words.")
    goals: list[str] = Field(min_length=1, description="Short phrases naming what would help them next.")


_SCORE = {"ge": 0, "le": 5}


class Insight(LazyModel):
    type: InsightType
    hook: str = Field(min_length=1, description="A short descriptive lead.")
    body: str = Field(min_length=1, description="The explanation, grounded in the passages.")
    realization: str = Field(min_length=1, description="The understanding the insight enables.")
    justification: str = Field(min_length=1, description="Why it is worth adding to the answer.")
    chunk_ids: list[str] = Field(min_length=1, description="Ids of the passages it draws on.")
    relevance: int = Field(**_SCORE, description="0-5: relevance to the question.")
    novelty: int = Field(**_SCORE, description="0-5: new relative to the answer.")
    usefulness: int = Field(**_SCORE, description="0-5: usefulness to the reader.")
    intent_alignment: int = Field(**_SCORE, description="0-5: fit with the asker's intent and goals.")


class InsightSet(LazyModel):
    insights: list[Insight] = Field(min_length=1)


def insight_text(insight: Insight) -> str:
    """What a judge reads of an insight: its hook and body."""
    return f"{insight.hook}: {insight.body}"
