"""The real SDKs against the fake server: success, repair, 429, 500s, timeouts, 401, 404."""

from __future__ import annotations

import json

import pytest

from insight_assets.core.llm import (
    SUMMARIZE_PASSAGES,
    AuthenticationError,
    InvalidOutputError,
    RequestRejectedError,
    RetriesExhaustedError,
    TaskParams,
    UnknownModelError,
    price_for,
)
from insight_assets.core.llm.providers.schema_bounds import DECODING_MAX_ITEMS
from insight_assets_tests.fake_model_server import Failure, Reply

from .conftest import MODELS, NETWORK_PROVIDERS, PASSAGES, SECRET, VALID_ANSWER, Harness

QUESTION = "How does self-attention handle distant tokens?"


def run_summary(client, question: str = QUESTION):
    return client.run(SUMMARIZE_PASSAGES, question=question, passages=PASSAGES)


@pytest.mark.parametrize("provider", NETWORK_PROVIDERS)
def test_success_returns_a_validated_object_and_a_ledger_row(harness: Harness, provider: str):
    harness.server.queue(Reply(VALID_ANSWER, input_tokens=120, output_tokens=30))
    client = harness.client(provider)

    answer = run_summary(client)

    assert answer.cited_ids == ["p1"]
    [request] = harness.server.requests
    assert QUESTION in request.last_user_text()
    [row] = harness.ledger().rows()
    assert (row.asset, row.partition, row.run_id) == ("test_asset", "2024", "run-1")
    assert (row.task, row.task_version, row.provider) == ("summarize_passages", "1", provider)
    assert (row.model, row.status, row.cache_hit, row.attempts) == (MODELS[provider], "ok", False, 1)
    assert (row.input_tokens, row.output_tokens) == (120, 30)
    price = price_for(provider, MODELS[provider])
    assert row.cost_usd == (None if price is None else pytest.approx(price.cost(120, 30)))


@pytest.mark.parametrize("provider", NETWORK_PROVIDERS)
def test_malformed_json_gets_one_repair_call_that_shows_the_error(harness: Harness, provider: str):
    fenced = f"Here you go:\n```json\n{VALID_ANSWER}\n```\nAnything else?"
    harness.server.queue(Reply('Sure! {"summary": "Self-attention", '), Reply(fenced))
    client = harness.client(provider)

    answer = run_summary(client)

    assert answer.summary == "Self-attention links distant tokens directly."
    repair = harness.server.requests[1]
    assert "no valid JSON object" in repair.last_user_text()
    assert [row.purpose for row in harness.ledger().rows()] == ["answer", "repair"]
    assert [row.status for row in harness.ledger().rows()] == ["invalid_output", "ok"]
    summary = client.summary()
    assert (summary.repairs, summary.failed_items, summary.provider_calls) == (1, 0, 2)


def test_the_repair_prompt_quotes_schema_and_grounding_errors(harness: Harness):
    wrong = json.dumps({"summary": "", "cited_ids": ["p9"]})
    harness.server.queue(Reply(wrong), Reply(VALID_ANSWER))

    run_summary(harness.client("openai"))

    repair = harness.server.requests[1]
    text = repair.last_user_text()
    assert "summary: String should have at least 1 character" in text
    # The conversation shows the model its own bad answer before the correction.
    assert repair.body["messages"][1] == {"role": "assistant", "content": wrong}


def test_a_cited_id_that_is_not_a_passage_is_repaired(harness: Harness):
    harness.server.queue(
        Reply(json.dumps({"summary": "Attention.", "cited_ids": ["p9"]})), Reply(VALID_ANSWER)
    )

    run_summary(harness.client("anthropic"))

    assert "'p9', which are not passage ids" in harness.server.requests[1].last_user_text()


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_output_invalid_after_the_repair_fails_clearly_and_is_not_cached(harness: Harness, provider: str):
    harness.server.queue(Reply("no json here"), Reply('{"summary": 3}'))
    client = harness.client(provider)

    with pytest.raises(InvalidOutputError, match="invalid output .* twice") as caught:
        run_summary(client)

    assert "cited_ids: Field required" in str(caught.value)
    assert len(harness.server.requests) == 2
    assert len(client.cache) == 0
    assert [row.status for row in harness.ledger().rows()] == ["invalid_output", "invalid_output"]
    assert client.summary().as_metadata()["llm_failed_items"] == 1


@pytest.mark.parametrize("provider", NETWORK_PROVIDERS)
def test_429_is_retried_after_the_servers_retry_after(harness: Harness, provider: str):
    harness.server.queue(Failure(429, "rate limited", {"Retry-After": "1"}), Reply(VALID_ANSWER))

    run_summary(harness.client(provider))

    assert len(harness.server.requests) == 2
    assert len(harness.clock.sleeps) == 1
    assert harness.clock.sleeps[0] >= 1.0
    [row] = harness.ledger().rows()
    assert (row.status, row.attempts) == ("ok", 2)


def test_openai_retry_after_ms_is_honoured(harness: Harness):
    harness.server.queue(Failure(429, "slow", {"retry-after-ms": "2500"}), Reply(VALID_ANSWER))

    run_summary(harness.client("openai"))

    assert harness.clock.sleeps[0] >= 2.5


@pytest.mark.parametrize("provider", NETWORK_PROVIDERS)
def test_repeated_500s_give_up_after_max_retries_and_the_item_is_recorded_failed(
    harness: Harness, provider: str
):
    harness.server.queue(*[Failure(500, "internal error")] * 3, Reply(VALID_ANSWER))
    client = harness.client(provider, max_retries=2)

    batch = client.run_many(
        SUMMARIZE_PASSAGES, [{"question": QUESTION, "passages": PASSAGES}], max_concurrency=1
    )

    [item] = batch.items
    assert item.status == "failed" and item.value is None
    assert "gave up after 3 attempts" in item.error and "HTTP 500" in item.error
    assert len(harness.server.requests) == 3
    # Exponential backoff with jitter: each wait in [step/2, step], the step doubling.
    first, second = harness.clock.sleeps
    assert 0.025 <= first <= 0.05 and 0.05 <= second <= 0.1
    [row] = harness.ledger().rows()
    assert (row.status, row.attempts) == ("error", 3)


def test_retries_stop_at_the_total_time_limit(harness: Harness):
    harness.server.queue(*[Failure(503, "overloaded", {"Retry-After": "20"})] * 3)
    client = harness.client("openai", max_retries=10, max_total_retry_s=30.0)

    with pytest.raises(RetriesExhaustedError, match="retry time limit of 30 s"):
        run_summary(client)

    assert harness.clock.sleeps == [20.0]
    assert len(harness.server.requests) == 2


@pytest.mark.parametrize("provider", NETWORK_PROVIDERS)
def test_a_timeout_is_retried_then_reported(harness: Harness, provider: str):
    harness.server.queue(Reply(VALID_ANSWER, delay_s=2.0), Reply(VALID_ANSWER, delay_s=2.0))
    client = harness.client(provider, timeout_s=0.25, max_retries=1)

    with pytest.raises(RetriesExhaustedError, match=r"did not answer within 0.25 s") as caught:
        run_summary(client)

    assert caught.value.attempts == 2
    assert len(harness.server.requests) == 2


@pytest.mark.parametrize("provider", NETWORK_PROVIDERS)
def test_401_fails_fast_and_names_the_env_var(harness: Harness, provider: str):
    # Some servers echo the key they were given; the message must not.
    harness.server.queue(Failure(401, f"Incorrect API key provided: {SECRET}"))
    client = harness.client(provider, api_key_env="MY_LLM_KEY")

    with pytest.raises(AuthenticationError) as caught:
        run_summary(client)

    message = str(caught.value)
    assert "authentication failed" in message and "MY_LLM_KEY" in message
    assert SECRET not in message
    assert caught.value.__cause__ is None and caught.value.__context__ is None
    assert len(harness.server.requests) == 1
    assert harness.clock.sleeps == []


def test_the_default_env_var_is_named_when_none_is_configured(harness: Harness):
    harness.server.queue(Failure(403, "forbidden"))

    with pytest.raises(AuthenticationError, match="ANTHROPIC_API_KEY"):
        run_summary(harness.client("anthropic"))


def test_gemini_rejecting_the_key_with_400_is_an_authentication_error(harness: Harness):
    harness.server.queue(Failure(400, "API key not valid. Please pass a valid API key."))

    with pytest.raises(AuthenticationError, match="GEMINI_API_KEY"):
        run_summary(harness.client("gemini"))


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_404_says_the_model_is_unknown(harness: Harness, provider: str):
    harness.server.queue(Failure(404, "The model does not exist"))

    with pytest.raises(UnknownModelError, match=f"unknown model '{MODELS[provider]}'"):
        run_summary(harness.client(provider))

    assert len(harness.server.requests) == 1


def test_other_4xx_fail_the_item_without_retrying_or_sinking_the_batch(harness: Harness):
    harness.server.queue(Failure(400, "context length exceeded"), Reply(VALID_ANSWER))
    items = [{"question": QUESTION, "passages": PASSAGES}, {"question": "Other?", "passages": PASSAGES}]

    batch = harness.client("openai").run_many(SUMMARIZE_PASSAGES, items, max_concurrency=1)

    assert [item.status for item in batch.items] == ["failed", "ok"]
    assert "context length exceeded" in batch.items[0].error
    assert len(harness.server.requests) == 2


def test_fatal_errors_stop_the_batch(harness: Harness):
    harness.server.default = Failure(401, "bad key")
    items = [{"question": f"Question {n}?", "passages": PASSAGES} for n in range(5)]

    with pytest.raises(AuthenticationError):
        harness.client("openai").run_many(SUMMARIZE_PASSAGES, items, max_concurrency=1)

    assert len(harness.server.requests) == 1


def test_request_rejected_is_not_retried(harness: Harness):
    harness.server.queue(Failure(422, "bad parameter"))

    with pytest.raises(RequestRejectedError, match=r"rejected the request \(HTTP 422\): bad parameter"):
        run_summary(harness.client("anthropic"))

    assert harness.clock.sleeps == []


def test_parameters_reach_the_provider(harness: Harness):
    harness.server.queue(Reply(VALID_ANSWER), Reply(VALID_ANSWER), Reply(VALID_ANSWER))

    run_summary(harness.client("openai", temperature=0.3))
    run_summary(
        harness.client("openai-compatible", task_overrides={"summarize_passages": TaskParams(max_tokens=77)})
    )
    run_summary(harness.client("gemini", max_tokens=55))

    openai_body, compatible_body, gemini_body = (r.body for r in harness.server.requests)
    assert openai_body["temperature"] == 0.3
    assert openai_body["max_completion_tokens"] == SUMMARIZE_PASSAGES.max_tokens
    assert openai_body["response_format"] == {"type": "json_object"}
    assert compatible_body["max_tokens"] == 77
    # A compatible server also gets the schema (llama.cpp's servers decode under it).
    assert compatible_body["response_format"]["schema"]["required"] == ["summary", "cited_ids"]
    assert gemini_body["generationConfig"]["maxOutputTokens"] == 55
    assert gemini_body["generationConfig"]["responseMimeType"] == "application/json"


def test_a_compatible_server_decodes_under_the_schema_narrowed_to_the_inputs(harness: Harness):
    harness.server.queue(Reply(VALID_ANSWER))

    run_summary(harness.client("openai-compatible"))

    schema = harness.server.requests[0].body["response_format"]["schema"]
    # Only the given passages' ids may be cited; the open list is bounded for decoding.
    assert schema["properties"]["cited_ids"]["items"] == {"enum": ["p1", "p2"]}
    assert schema["properties"]["cited_ids"]["maxItems"] == DECODING_MAX_ITEMS
    assert SUMMARIZE_PASSAGES.output_schema["properties"]["cited_ids"]["items"] == {"type": "string"}
