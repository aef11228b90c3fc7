"""``summarize_passages``: answer a question from passages, citing them.

The example task that exercises the whole mechanism. Its offline implementation is extractive: it
picks the passages' most central sentences that bear on the question (``extractive.py``) and
cites the passages they came from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from insight_assets.core.startup.lazy import LazyModel

from ..extractive import rank_sentences
from ..text import sentence_texts
from .tasks import Task, narrowed, register_task

NO_TEXT_SUMMARY = "The passages contain no text to summarize."


class Passage(LazyModel):
    id: str
    text: str


class PassageSummary(LazyModel):
    summary: str = Field(min_length=1, description="The answer, from the passages only.")
    cited_ids: list[str] = Field(description="Ids of the passages the summary relies on.")


def _passages(inputs: Mapping[str, Any]) -> list[Passage]:
    return [Passage.model_validate(passage) for passage in inputs["passages"]]


def format_inputs(inputs: Mapping[str, Any]) -> dict[str, str]:
    return {
        "question": str(inputs["question"]),
        "passages": "\n\n".join(
            f"[{passage.id}] {' '.join(passage.text.split())}" for passage in _passages(inputs)
        ),
        "max_sentences": str(inputs["max_sentences"]),
    }


def check_citations(output: PassageSummary, inputs: Mapping[str, Any]) -> list[str]:
    known = {passage.id for passage in _passages(inputs)}
    unknown = [cited for cited in output.cited_ids if cited not in known]
    if unknown:
        listed = ", ".join(map(repr, unknown))
        allowed = ", ".join(map(repr, sorted(known)))
        return [f"cited_ids contains {listed}, which are not passage ids; use only {allowed}"]
    return []


def summarize_offline(
    question: str, passages: Sequence[Mapping[str, Any] | Passage], max_sentences: int
) -> PassageSummary:
    """The most central sentences that bear on ``question``, in reading order."""
    found: list[tuple[str, str]] = []  # (passage id, sentence), in reading order
    for passage in _passages({"passages": passages}):
        for sentence in sentence_texts(passage.text):
            found.append((passage.id, sentence))
    if not found:
        return PassageSummary(summary=NO_TEXT_SUMMARY, cited_ids=[])
    chosen = sorted(rank_sentences([text for _, text in found], question, limit=max_sentences))
    cited: list[str] = []
    for index in chosen:
        if found[index][0] not in cited:
            cited.append(found[index][0])
    return PassageSummary(summary=" ".join(found[index][1] for index in chosen), cited_ids=cited)


SUMMARIZE_PASSAGES: Task[PassageSummary] = register_task(
    Task(
        name="summarize_passages",
        version=1,
        template="summarize_passages.v1.txt",
        output_model=PassageSummary,
        offline=summarize_offline,
        inputs=("question", "passages", "max_sentences"),
        trim_input="passages",
        decoding_schema=lambda inputs: narrowed(
            PassageSummary.model_json_schema(),
            cited_ids={"items": {"enum": [p.id for p in _passages(inputs)]}},
        ),
        input_defaults={"max_sentences": 4},
        format_inputs=format_inputs,
        check_output=check_citations,
        max_tokens=600,
        expected_output_tokens=200,
        description="Answer a question from passages, citing the passages used.",
    )
)
