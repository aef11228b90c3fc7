"""The small parts: JSON extraction, Retry-After, backoff, prices, settings, tasks, redaction."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from insight_assets.core.llm import (
    SUMMARIZE_PASSAGES,
    ConfigurationError,
    LLMSettings,
    Task,
    TaskDefinitionError,
    TaskInputError,
    TaskParams,
    get_task,
    price_for,
    register_task,
)
from insight_assets.core.llm.jsonout import OutputProblem, extract_json, parse_output
from insight_assets.core.llm.pricing import estimate_cost
from insight_assets.core.llm.rate_limits import parse_retry_after
from insight_assets.core.llm.redaction import Redactor
from insight_assets.core.llm.retry import RetryPolicy


class Answer(BaseModel):
    answer: str
    score: int


@pytest.mark.parametrize(
    "reply",
    [
        '{"answer": "yes", "score": 2}',
        'Here is the JSON you asked for: {"answer": "yes", "score": 2} Hope it helps!',
        '```json\n{"answer": "yes", "score": 2}\n```',
        'Sure.\n```\n{"answer": "yes", "score": 2}\n```\nDone.',
        'Options [1, 2] considered. Result: {"answer": "yes", "score": 2}',
    ],
)
def test_json_is_found_in_prose_and_fences(reply: str):
    assert parse_output(reply, Answer) == Answer(answer="yes", score=2)


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("", "empty"),
        ("I cannot help with that.", "no valid JSON object"),
        ('{"answer": "yes"', "no valid JSON object"),
        ('{"answer": "yes"}', "score: Field required"),
        ('{"answer": "yes", "score": "high"}', "score: Input should be a valid integer"),
    ],
)
def test_unusable_replies_are_described_for_the_repair_call(reply: str, problem: str):
    with pytest.raises(OutputProblem, match=problem):
        parse_output(reply, Answer)


@given(st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=8), max_size=4))
def test_any_object_survives_being_wrapped_in_prose(value: dict):
    import json

    assert extract_json(f"Result:\n```json\n{json.dumps(value)}\n```\nThanks.") == value


def test_retry_after_in_seconds_milliseconds_and_http_dates():
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(now + timedelta(seconds=7), usegmt=True)
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"Retry-After": later}, now=now) == pytest.approx(7.0)
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_backoff_grows_exponentially_with_jitter_and_a_cap():
    policy = RetryPolicy(initial_backoff_s=1.0, max_backoff_s=8.0)
    rng = random.Random(1)
    for retry, step in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (6, 8.0)]:
        waits = {policy.backoff_s(retry, rng) for _ in range(20)}
        assert all(step / 2 <= wait <= step for wait in waits)
        assert len(waits) > 1


def test_prices_by_exact_name_prefix_or_none():
    assert price_for("openai", "gpt-4o-mini-2024-07-18") == price_for("openai", "gpt-4o-mini")
    assert price_for("openai", "gpt-4o-2024-08-06") == price_for("openai", "gpt-4o")
    assert price_for("gemini", "models/gemini-2.5-flash-lite") == price_for("gemini", "gemini-2.5-flash-lite")
    assert price_for("anthropic", "claude-sonnet-4-5-20250929").output_per_mtok == 15.0
    assert price_for("openai", "my-finetune") is None
    assert estimate_cost("openai", "my-finetune", 10, 10) is None
    assert estimate_cost("offline", "extractive", 10**6, 10**6) == 0.0
    assert estimate_cost("openai", "gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)


def test_parameters_resolve_task_then_settings_then_per_task_override():
    settings = LLMSettings(provider="openai", api_key="k" * 10, temperature=0.2)
    assert settings.params_for(SUMMARIZE_PASSAGES).max_tokens == SUMMARIZE_PASSAGES.max_tokens
    assert settings.params_for(SUMMARIZE_PASSAGES).temperature == 0.2
    assert settings.params_for(SUMMARIZE_PASSAGES).model == "gpt-4o-mini"
    override = settings.with_task_override("summarize_passages", model="gpt-4o", max_tokens=99)
    params = override.params_for(SUMMARIZE_PASSAGES)
    assert (params.model, params.max_tokens, params.temperature) == ("gpt-4o", 99, 0.2)
    assert override.task_overrides["summarize_passages"] == TaskParams(model="gpt-4o", max_tokens=99)


def test_bad_settings_say_what_to_fix():
    with pytest.raises(ConfigurationError, match="choose one of offline, openai"):
        LLMSettings(provider="openia")
    with pytest.raises(ConfigurationError, match="needs base_url"):
        LLMSettings(provider="openai-compatible", model="llama3")
    with pytest.raises(ConfigurationError, match="set the environment variable OPENAI_API_KEY"):
        LLMSettings(provider="openai").check_ready()
    assert "sk-" not in repr(LLMSettings(provider="openai", api_key="sk-should-not-show"))


def test_task_inputs_are_checked_by_name():
    with pytest.raises(TaskInputError, match="missing passages"):
        SUMMARIZE_PASSAGES.complete_inputs({"question": "q"})
    with pytest.raises(TaskInputError, match="unexpected passage"):
        SUMMARIZE_PASSAGES.complete_inputs({"question": "q", "passages": [], "passage": []})
    assert SUMMARIZE_PASSAGES.complete_inputs({"question": "q", "passages": []})["max_sentences"] == 4


def test_templates_are_files_and_names_are_unique(tmp_path: Path):
    with pytest.raises(TaskDefinitionError, match="not in insight_assets/core/prompts"):
        Task("x", 1, "no_such_prompt.txt", Answer, offline=lambda: None)
    path = tmp_path / "bad.txt"
    path.write_text("Cost: $5 for $question")
    with pytest.raises(TaskDefinitionError, match=r"write a literal dollar sign as \$\$"):
        Task("x", 1, path, Answer, offline=lambda question: None)
    assert get_task("summarize_passages") is SUMMARIZE_PASSAGES
    clash = Task("summarize_passages", 2, "summarize_passages.v1.txt", Answer, offline=lambda: None)
    with pytest.raises(TaskDefinitionError, match="two tasks are named"):
        register_task(clash)


def test_the_redactor_hides_the_key_and_key_shaped_strings():
    redact = Redactor(["my-secret-value-123"])
    text = redact("key my-secret-value-123 and sk-proj-abc***xyz9 and AIzaSyA1234567890abcdef")
    assert text == "key [redacted] and [redacted] and [redacted]"
    assert Redactor([None, ""])("nothing to hide") == "nothing to hide"
