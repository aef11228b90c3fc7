"""Tasks that answer in prose (``text_field``): plain-text replies, top_p, max_tokens sized to the
input, one retry with more room when a reply is cut off, and the finish reason of each item."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pytest
from pydantic import BaseModel

from insight_assets.core.llm import LLMClient, LLMSettings, Task, TaskParams
from insight_assets.core.llm.errors import TaskDefinitionError
from insight_assets.core.llm.results import FINISHED, TRUNCATED
from insight_assets_tests.core.llm.conftest import Harness
from insight_assets_tests.fake_model_server import Reply


class Prose(BaseModel):
    text: str


def _check_sources(output: Prose, inputs: Mapping[str, Any]) -> list[str]:
    unknown = sorted(set(re.findall(r"\[(S\d+)\]", output.text)) - set(inputs["sources"]))
    return [f"{', '.join(unknown)} are not sources"] if unknown else []


def _offline(topic: str, sources: list[str]) -> Prose:
    return Prose(text=f"{topic} [{sources[0]}]")


WRITE_PROSE = Task(
    name="test_write_prose",
    version=1,
    template="summarize_passages.v1.txt",
    output_model=Prose,
    offline=_offline,
    inputs=("topic", "sources"),
    format_inputs=lambda inputs: {
        "question": inputs["topic"],
        "passages": " ".join(inputs["sources"]),
        "max_sentences": "3",
        "output_schema": "",
    },
    check_output=_check_sources,
    temperature=0.3,
    top_p=0.95,
    text_field="text",
    max_tokens_for=lambda inputs: 100 * len(inputs["sources"]),
)
INPUTS = {"topic": "attention", "sources": ["S1", "S2"]}


def test_a_text_reply_fills_the_field_without_json(harness: Harness):
    harness.server.queue(Reply("Attention links tokens [S1]."))
    client = harness.client("openai", cache=False)

    batch = client.run_many(WRITE_PROSE, [INPUTS])

    assert batch.items[0].value == Prose(text="Attention links tokens [S1].")
    assert batch.items[0].finish_reason == FINISHED
    body = harness.server.requests[0].body
    assert "response_format" not in body
    assert body["top_p"] == 0.95 and body["temperature"] == 0.3
    assert body["max_completion_tokens"] == 200  # sized to the input


def test_configured_max_tokens_wins_over_the_sizing(harness: Harness):
    harness.server.queue(Reply("Fine [S2]."))
    client = harness.client(
        "openai-compatible", cache=False, task_overrides={WRITE_PROSE.name: TaskParams(max_tokens=64)}
    )

    client.run(WRITE_PROSE, **INPUTS)

    assert harness.server.requests[0].body["max_tokens"] == 64


def test_a_cut_off_reply_is_asked_again_once_with_twice_the_room(harness: Harness):
    harness.server.queue(Reply("Attention links", truncated=True), Reply("Attention links tokens [S1]."))
    client = harness.client("openai", cache=False)

    item = client.run_many(WRITE_PROSE, [INPUTS]).items[0]

    assert item.finish_reason == FINISHED
    assert item.value.text == "Attention links tokens [S1]."
    sizes = [request.body["max_completion_tokens"] for request in harness.server.requests]
    assert sizes == [200, 400]
    assert [row.purpose for row in client.rows] == ["answer", "longer"]


def test_a_reply_cut_off_at_the_configured_max_tokens_is_kept_without_asking_again(harness: Harness):
    harness.server.queue(Reply("Attention [S1] links", truncated=True), Reply("Attention [S1] links to"))
    client = harness.client(
        "openai-compatible", cache=False, task_overrides={WRITE_PROSE.name: TaskParams(max_tokens=64)}
    )

    item = client.run_many(WRITE_PROSE, [INPUTS]).items[0]

    assert item.ok and item.finish_reason == TRUNCATED
    assert item.value.text == "Attention [S1] links"
    assert [request.body["max_tokens"] for request in harness.server.requests] == [64]
    assert [row.purpose for row in client.rows] == ["answer"]


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_cut_off_twice_is_kept_marked_truncated_and_cached_as_what_it_is(harness: Harness, provider: str):
    harness.server.queue(
        Reply("Attention [S1] links", truncated=True), Reply("Attention [S1] links to", truncated=True)
    )
    client = harness.client(provider)

    item = client.run_many(WRITE_PROSE, [INPUTS]).items[0]

    assert item.ok and item.finish_reason == TRUNCATED
    assert item.value.text == "Attention [S1] links to"
    harness.server.queue(Reply("Whole answer [S2]."))
    again = harness.client(provider).run_many(WRITE_PROSE, [INPUTS]).items[0]
    # Asked again, the same request would be cut off again: the cache answers, still marked.
    assert again.finish_reason == TRUNCATED and again.value.text == "Attention [S1] links to"
    assert len(harness.server.requests) == 2


def test_a_reply_cut_off_at_the_users_max_tokens_is_not_bought_twice(harness: Harness):
    harness.server.queue(Reply("Attention [S1] links", truncated=True), Reply("Other [S2]."))
    overrides = {WRITE_PROSE.name: TaskParams(max_tokens=64)}

    first = harness.client("openai", task_overrides=overrides).run_many(WRITE_PROSE, [INPUTS]).items[0]
    client = harness.client("openai", task_overrides=overrides)
    second = client.run_many(WRITE_PROSE, [INPUTS]).items[0]

    assert first.finish_reason == second.finish_reason == TRUNCATED
    assert second.value.text == "Attention [S1] links"
    assert len(harness.server.requests) == 1
    assert client.summary().cache_hits == 1 and client.summary().provider_calls == 0


def test_a_grounding_problem_gets_a_plain_text_repair(harness: Harness):
    harness.server.queue(Reply("Attention [S9]."), Reply("Attention [S2]."))
    client = harness.client("openai", cache=False)

    value = client.run(WRITE_PROSE, **INPUTS)

    assert value.text == "Attention [S2]."
    repair = harness.server.requests[1].last_user_text()
    assert "S9 are not sources" in repair and "text only" in repair


def test_offline_answers_are_finished():
    client = LLMClient(LLMSettings())

    item = client.run_many(WRITE_PROSE, [INPUTS]).items[0]

    assert item.finish_reason == FINISHED and item.value.text == "attention [S1]"


def test_sizing_needs_a_text_field():
    with pytest.raises(TaskDefinitionError, match="text_field"):
        Task(
            name="test_bad_sizing",
            version=1,
            template="summarize_passages.v1.txt",
            output_model=Prose,
            offline=_offline,
            max_tokens_for=lambda inputs: 10,
        )
