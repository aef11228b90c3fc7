"""Insight-generation methods: InsightGen and its baselines as LLM tasks (see ``insightgen``)."""

from .insightgen import (
    DIRECT_INSIGHTS,
    GENERATE_INSIGHTS,
    INFER_INTENT,
    INSIGHT_TYPES,
    METHODS,
    ContextPassage,
    Insight,
    InsightSet,
    UserIntent,
    direct_insights_inputs,
    generate_insights,
    generate_insights_inputs,
    infer_intent_inputs,
    insight_text,
    uses_chain_of_thought,
)

__all__ = [
    "DIRECT_INSIGHTS",
    "GENERATE_INSIGHTS",
    "INFER_INTENT",
    "INSIGHT_TYPES",
    "METHODS",
    "ContextPassage",
    "Insight",
    "InsightSet",
    "UserIntent",
    "direct_insights_inputs",
    "generate_insights",
    "generate_insights_inputs",
    "infer_intent_inputs",
    "insight_text",
    "uses_chain_of_thought",
]
