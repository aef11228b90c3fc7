"""InsightGen's tasks: ``infer_intent``, ``generate_insights`` (chain of thought) and
``direct_insights`` (the Direct baseline's single prompt), their inputs and grounding check.

Generation uses the paper's settings: temperature 0.7, max_tokens 4000 (Appendix C).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...llm import LLMClient, Task, narrowed, register_task
from ...llm.errors import TaskInputError
from .offline import direct_insights_offline, generate_insights_offline, infer_intent_offline
from .schemas import (
    DEFAULT_MAX_INSIGHTS,
    GENERATION_MAX_TOKENS,
    GENERATION_TEMPERATURE,
    INSIGHT_TYPES,
    ContextPassage,
    InsightSet,
    UserIntent,
)

# -- inputs -----------------------------------------------------------------------------------


def passage_inputs(passages: Sequence[ContextPassage | Mapping[str, Any]]) -> list[dict[str, str]]:
    """JSON-able passages for a task's inputs; raises ``TaskInputError`` when there are none, as a
    model could then cite nothing."""
    found = [
        {"chunk_id": str(p.chunk_id), "text": p.text}
        if isinstance(p, ContextPassage)
        else {"chunk_id": str(p["chunk_id"]), "text": str(p["text"])}
        for p in passages
    ]
    if not found:
        raise TaskInputError("insight generation needs at least one context passage")
    return found


def _checked_max_insights(max_insights: int) -> int:
    if max_insights < 1:
        raise TaskInputError(f"max_insights must be at least 1, not {max_insights}")
    return max_insights


def infer_intent_inputs(question: str, answer: str) -> dict[str, Any]:
    return {"question": question, "answer": answer}


def generate_insights_inputs(
    question: str,
    answer: str,
    intent: UserIntent,
    passages: Sequence[ContextPassage | Mapping[str, Any]],
    max_insights: int = DEFAULT_MAX_INSIGHTS,
) -> dict[str, Any]:
    return {
        "question": question,
        "answer": answer,
        "intent": intent.model_dump(),
        "passages": passage_inputs(passages),
        "max_insights": _checked_max_insights(max_insights),
    }


def direct_insights_inputs(
    question: str,
    answer: str,
    passages: Sequence[ContextPassage | Mapping[str, Any]],
    max_insights: int = DEFAULT_MAX_INSIGHTS,
) -> dict[str, Any]:
    return {
        "question": question,
        "answer": answer,
        "passages": passage_inputs(passages),
        "max_insights": _checked_max_insights(max_insights),
    }


def _format_passages(passages: Sequence[Mapping[str, str]]) -> str:
    return "\n\n".join(f"[{p['chunk_id']}] {' '.join(p['text'].split())}" for p in passages)


def _format_insight_inputs(inputs: Mapping[str, Any]) -> dict[str, str]:
    values = {
        "question": str(inputs["question"]),
        "answer": str(inputs["answer"]),
        "passages": _format_passages(inputs["passages"]),
        "max_insights": str(inputs["max_insights"]),
        "insight_types": "\n".join(f"  - {name}" for name in INSIGHT_TYPES),
    }
    if "intent" in inputs:
        intent = UserIntent.model_validate(inputs["intent"])
        goals = "\n".join(f"  - {goal}" for goal in intent.goals)
        values["intent"] = f"Persona: {intent.persona}\nIntent: {intent.intent}\nGoals:\n{goals}"
    return values


def check_insights(output: InsightSet, inputs: Mapping[str, Any]) -> list[str]:
    """Every cited chunk id was given, and there are no more insights than asked for."""
    problems = []
    known = {p["chunk_id"] for p in inputs["passages"]}
    unknown = sorted({cid for insight in output.insights for cid in insight.chunk_ids} - known)
    if unknown:
        problems.append(
            f"chunk_ids contains {', '.join(map(repr, unknown))}, which are not chunk ids of the "
            f"passages; use only {', '.join(map(repr, sorted(known)))}"
        )
    if len(output.insights) > inputs["max_insights"]:
        problems.append(f"there are {len(output.insights)} insights; write at most {inputs['max_insights']}")
    return problems


def _insights_schema(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """What ``check_insights`` accepts, for a model decoding under the schema: no more insights than
    asked for, each citing only the passages' chunk ids."""
    schema = narrowed(InsightSet.model_json_schema(), insights={"maxItems": int(inputs["max_insights"])})
    known = sorted({p["chunk_id"] for p in inputs["passages"]})
    if not known:  # an empty enumeration makes no grammar; the check refuses any id
        return schema
    return narrowed(schema, "Insight", chunk_ids={"items": {"type": "string", "enum": known}})


# -- tasks ------------------------------------------------------------------------------------

INFER_INTENT: Task[UserIntent] = register_task(
    Task(
        name="infer_intent",
        version=1,
        template="infer_intent.v1.txt",
        output_model=UserIntent,
        offline=infer_intent_offline,
        temperature=GENERATION_TEMPERATURE,
        max_tokens=GENERATION_MAX_TOKENS,
        expected_output_tokens=200,
        description="Chain of thought, step 1: infer the asker's intent, persona and goals.",
    )
)

GENERATE_INSIGHTS: Task[InsightSet] = register_task(
    Task(
        name="generate_insights",
        version=1,
        template="generate_insights.v1.txt",
        output_model=InsightSet,
        offline=generate_insights_offline,
        inputs=("question", "answer", "intent", "passages", "max_insights"),
        trim_input="passages",
        input_defaults={"max_insights": DEFAULT_MAX_INSIGHTS},
        format_inputs=_format_insight_inputs,
        check_output=check_insights,
        decoding_schema=_insights_schema,
        temperature=GENERATION_TEMPERATURE,
        max_tokens=GENERATION_MAX_TOKENS,
        expected_output_tokens=1500,
        description="Chain of thought, step 2: typed, grounded, self-assessed insights.",
    )
)

DIRECT_INSIGHTS: Task[InsightSet] = register_task(
    Task(
        name="direct_insights",
        version=1,
        template="direct_insights.v1.txt",
        output_model=InsightSet,
        offline=direct_insights_offline,
        inputs=("question", "answer", "passages", "max_insights"),
        trim_input="passages",
        input_defaults={"max_insights": DEFAULT_MAX_INSIGHTS},
        format_inputs=_format_insight_inputs,
        check_output=check_insights,
        decoding_schema=_insights_schema,
        temperature=GENERATION_TEMPERATURE,
        max_tokens=GENERATION_MAX_TOKENS,
        expected_output_tokens=1500,
        description="The Direct baseline: insights from one prompt stating the requirements.",
    )
)


def generate_insights(
    client: LLMClient,
    *,
    question: str,
    answer: str,
    passages: Sequence[ContextPassage | Mapping[str, Any]],
    chain_of_thought: bool,
    max_insights: int = DEFAULT_MAX_INSIGHTS,
) -> tuple[UserIntent | None, InsightSet]:
    """The insights for one question; with ``chain_of_thought`` also the inferred intent.

    Raises ``LLMError`` as ``client.run`` does. To batch many questions, run ``INFER_INTENT`` then
    ``GENERATE_INSIGHTS`` (or ``DIRECT_INSIGHTS``) with ``client.run_many`` on inputs from
    ``infer_intent_inputs``, ``generate_insights_inputs`` and ``direct_insights_inputs``.
    """
    if not chain_of_thought:
        return None, client.run(
            DIRECT_INSIGHTS, **direct_insights_inputs(question, answer, passages, max_insights)
        )
    intent = client.run(INFER_INTENT, **infer_intent_inputs(question, answer))
    insights = client.run(
        GENERATE_INSIGHTS, **generate_insights_inputs(question, answer, intent, passages, max_insights)
    )
    return intent, insights
