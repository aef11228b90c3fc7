"""The judge tasks: methods shown in a shuffled order under anonymous labels, and the two prompts
(set level, insight level) with their label checks."""

from __future__ import annotations

import random
import string
from collections.abc import Mapping, Sequence
from typing import Any

from ....llm import Task, one_item_each, register_task
from .offline import judge_sets_offline, judge_single_offline
from .schemas import MethodInsights, SetJudgement


def shuffled_methods(methods: Sequence[str], *, question_id: str, seed: int) -> list[str]:
    """``methods`` in an order fixed by (seed, question) and differing across questions; the order
    the caller lists them in does not matter."""
    order = sorted(methods)
    random.Random(f"{seed}|{question_id}").shuffle(order)
    return order


def method_label(position: int) -> str:
    if position >= len(string.ascii_uppercase):
        raise ValueError("at most 26 methods can be judged together")
    return f"Method {string.ascii_uppercase[position]}"


def check_sets(sets: Sequence[MethodInsights]) -> dict[str, tuple[str, ...]]:
    by_method = {s.method: tuple(s.insights) for s in sets}
    if len(by_method) != len(sets):
        raise ValueError("each method may appear only once among the sets judged together")
    empty = sorted(method for method, insights in by_method.items() if not insights)
    if empty:
        raise ValueError(f"methods {', '.join(empty)} have no insights to judge; leave them out")
    return by_method


def _format_set_inputs(inputs: Mapping[str, Any]) -> dict[str, str]:
    blocks = []
    for shown in inputs["sets"]:
        lines = "\n".join(f"  {n}. {' '.join(text.split())}" for n, text in enumerate(shown["insights"], 1))
        blocks.append(f"{shown['label']}:\n{lines}")
    return {"question": inputs["question"], "answer": inputs["answer"], "insight_sets": "\n\n".join(blocks)}


def _format_single_inputs(inputs: Mapping[str, Any]) -> dict[str, str]:
    blocks = [f"{shown['label']}: {' '.join(shown['insight'].split())}" for shown in inputs["insights"]]
    return {"question": inputs["question"], "answer": inputs["answer"], "insights": "\n\n".join(blocks)}


def _label_problems(judgement: SetJudgement, shown: Sequence[str]) -> list[str]:
    given = [score.label for score in judgement.scores]
    problems = []
    unknown = sorted(set(given) - set(shown))
    missing = [label for label in shown if label not in given]
    repeated = sorted({label for label in given if given.count(label) > 1})
    if unknown:
        problems.append(f"scores name {', '.join(map(repr, unknown))}, which were not shown")
    if missing:
        problems.append(f"no score for {', '.join(map(repr, missing))}")
    if repeated:
        problems.append(f"more than one score for {', '.join(map(repr, repeated))}")
    if problems:
        problems.append(f"give exactly one score per label: {', '.join(map(repr, shown))}")
    return problems


def check_set_judgement(judgement: SetJudgement, inputs: Mapping[str, Any]) -> list[str]:
    problems = _label_problems(judgement, [shown["label"] for shown in inputs["sets"]])
    no_diversity = [score.label for score in judgement.scores if score.diversity is None]
    if no_diversity:
        problems.append(f"diversity is missing for {', '.join(map(repr, no_diversity))}")
    return problems


def check_single_judgement(judgement: SetJudgement, inputs: Mapping[str, Any]) -> list[str]:
    return _label_problems(judgement, [shown["label"] for shown in inputs["insights"]])


# For a model decoding under the schema (a local one): one score per label shown, in the order shown,
# a set's diversity included; SmolLM2 otherwise answered scores for no label at all.
def _set_schema(inputs: Mapping[str, Any]) -> dict[str, Any]:
    labels = [shown["label"] for shown in inputs["sets"]]
    diversity = {"type": "number", "minimum": 0, "maximum": 5}
    return one_item_each(
        SetJudgement.model_json_schema(),
        "scores",
        "label",
        labels,
        required=("diversity",),
        diversity=diversity,
    )


def _single_schema(inputs: Mapping[str, Any]) -> dict[str, Any]:
    labels = [shown["label"] for shown in inputs["insights"]]
    return one_item_each(SetJudgement.model_json_schema(), "scores", "label", labels)


JUDGE_INSIGHT_SET: Task[SetJudgement] = register_task(
    Task(
        name="judge_insight_set",
        version=2,
        template="judge_insight_set.v2.txt",
        output_model=SetJudgement,
        offline=judge_sets_offline,
        inputs=("question", "answer", "sets"),
        format_inputs=_format_set_inputs,
        check_output=check_set_judgement,
        decoding_schema=_set_schema,
        max_tokens=2000,
        expected_output_tokens=600,
        description="Set-level judge: score each anonymised method's whole insight set.",
    )
)

JUDGE_SINGLE_INSIGHTS: Task[SetJudgement] = register_task(
    Task(
        name="judge_single_insights",
        version=2,
        template="judge_single_insights.v2.txt",
        output_model=SetJudgement,
        offline=judge_single_offline,
        inputs=("question", "answer", "insights"),
        format_inputs=_format_single_inputs,
        check_output=check_single_judgement,
        decoding_schema=_single_schema,
        max_tokens=2000,
        expected_output_tokens=500,
        description="Insight-level judge: score one sampled insight per anonymised method.",
    )
)
