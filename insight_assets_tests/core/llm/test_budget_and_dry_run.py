"""Budgets stop a run before it is exceeded; dry runs estimate without calling anyone."""

from __future__ import annotations

import pytest

from insight_assets.core.llm import SUMMARIZE_PASSAGES, Budget, BudgetExceeded, CallContext, price_for
from insight_assets.core.llm.errors import InvalidOutputError, LLMError
from insight_assets.core.llm.providers import Message
from insight_assets.core.llm.results import count_message_tokens
from insight_assets_tests.fake_model_server import Failure, Reply

from .conftest import MODELS, PASSAGES, VALID_ANSWER, Harness

# Same length, so every item's estimate is the same.
ITEMS = [{"question": f"What does passage set {n} say?", "passages": PASSAGES} for n in range(3)]


def prompt_tokens(item: dict) -> int:
    prompt = SUMMARIZE_PASSAGES.render(SUMMARIZE_PASSAGES.complete_inputs(item))
    return count_message_tokens([Message("user", prompt)])


def estimated_cost(provider: str, item: dict) -> float:
    """What the budget reserves for one call: the prompt plus all of max_tokens."""
    price = price_for(provider, MODELS[provider])
    return price.cost(prompt_tokens(item), SUMMARIZE_PASSAGES.max_tokens)


def test_a_tiny_budget_stops_before_the_first_call(harness: Harness):
    client = harness.client("openai", budget=Budget(max_usd=0.000001))

    with pytest.raises(BudgetExceeded, match=r"budget of \$0.000001 .* it was not sent"):
        client.run(SUMMARIZE_PASSAGES, **ITEMS[0])

    assert harness.server.requests == []
    assert client.summary().budget_refusals == 1


def test_the_budget_stops_a_batch_before_the_call_that_could_exceed_it(harness: Harness):
    harness.server.default = Reply(VALID_ANSWER, input_tokens=300, output_tokens=100)
    first_cost = price_for("openai", "gpt-4o-mini").cost(300, 100)
    budget = Budget(max_usd=estimated_cost("openai", ITEMS[0]) + first_cost / 2)
    client = harness.client("openai", budget=budget)

    batch = client.run_many(SUMMARIZE_PASSAGES, ITEMS, max_concurrency=1)

    assert [item.status for item in batch.items] == ["ok", "skipped", "skipped"]
    assert batch.budget_exceeded and "would be exceeded" in str(batch.budget_error)
    assert len(harness.server.requests) == 1
    assert budget.spent() == (pytest.approx(first_cost), 400)
    assert client.summary().as_metadata()["llm_budget_refusals"] == 1


def test_a_run_budget_counts_what_other_assets_of_the_run_spent(harness: Harness):
    harness.server.default = Reply(VALID_ANSWER, input_tokens=300, output_tokens=100)
    limit = estimated_cost("openai", ITEMS[0]) * 1.5
    first_asset = harness.client(
        "openai",
        budget=Budget(max_usd=limit, ledger=harness.ledger(), run_id="run-7"),
        context=CallContext(asset="a", run_id="run-7"),
    )
    first_asset.run(SUMMARIZE_PASSAGES, **ITEMS[0])
    first_asset.run(SUMMARIZE_PASSAGES, **ITEMS[1])
    # A separate Budget object, as in another process, reading the same ledger.
    second_asset = harness.client(
        "openai",
        budget=Budget(max_usd=limit, ledger=harness.ledger(), run_id="run-7"),
        context=CallContext(asset="b", run_id="run-7"),
    )

    with pytest.raises(BudgetExceeded):
        second_asset.run(SUMMARIZE_PASSAGES, **ITEMS[2])

    assert len(harness.server.requests) == 2


def test_a_token_budget_limits_unpriced_models(harness: Harness):
    harness.server.default = Reply(VALID_ANSWER, input_tokens=300, output_tokens=100)
    reserved = prompt_tokens(ITEMS[0]) + SUMMARIZE_PASSAGES.max_tokens
    limit = reserved + 200  # room for one call, not for what it used (400) plus another
    client = harness.client("openai-compatible", budget=Budget(max_usd=0.0, max_tokens=limit))

    client.run(SUMMARIZE_PASSAGES, **ITEMS[0])  # unpriced: the USD limit cannot apply
    with pytest.raises(BudgetExceeded, match=f"token budget of {limit}"):
        client.run(SUMMARIZE_PASSAGES, **ITEMS[1])

    assert len(harness.server.requests) == 1


def test_cache_hits_cost_no_budget(harness: Harness):
    harness.server.default = Reply(VALID_ANSWER)
    harness.client("openai").run(SUMMARIZE_PASSAGES, **ITEMS[0])

    client = harness.client("openai", budget=Budget(max_usd=0.0))

    assert client.run(SUMMARIZE_PASSAGES, **ITEMS[0]).cited_ids == ["p1"]


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_a_dry_run_estimates_tokens_and_cost_without_calling_anyone(harness: Harness, provider: str):
    client = harness.client(provider, api_key=None)  # no key needed to estimate

    estimate = client.dry_run(SUMMARIZE_PASSAGES, ITEMS)

    assert harness.server.requests == []
    prompts = [SUMMARIZE_PASSAGES.render(SUMMARIZE_PASSAGES.complete_inputs(i)) for i in ITEMS]
    input_tokens = sum(count_message_tokens([Message("user", p)]) for p in prompts)
    price = price_for(provider, MODELS[provider])
    assert (estimate.items, estimate.cached_items) == (3, 0)
    assert estimate.input_tokens == input_tokens
    assert estimate.output_tokens == 3 * SUMMARIZE_PASSAGES.expected_output_tokens
    assert estimate.cost_usd == pytest.approx(price.cost(input_tokens, estimate.output_tokens))
    assert estimate.max_cost_usd == pytest.approx(price.cost(input_tokens, 3 * SUMMARIZE_PASSAGES.max_tokens))
    assert estimate.as_metadata()["llm_dry_run_items"] == 3


def test_a_dry_run_counts_cached_items_as_free(harness: Harness):
    harness.server.default = Reply(VALID_ANSWER)
    harness.client("openai").run(SUMMARIZE_PASSAGES, **ITEMS[0])

    estimate = harness.client("openai").dry_run(SUMMARIZE_PASSAGES, ITEMS)

    assert estimate.cached_items == 1
    assert estimate.input_tokens == prompt_tokens(ITEMS[1]) + prompt_tokens(ITEMS[2])
    assert estimate.output_tokens == 2 * SUMMARIZE_PASSAGES.expected_output_tokens
    assert len(harness.server.requests) == 1


def test_a_dry_run_of_an_unpriced_model_says_so(harness: Harness):
    estimate = harness.client("openai-compatible").dry_run(SUMMARIZE_PASSAGES, ITEMS[:1])

    assert estimate.cost_usd is None
    assert "no price for openai-compatible model 'llama3.1:8b'" in estimate.note


def test_an_estimate_only_client_prices_a_chain_and_feeds_it_offline_answers(harness: Harness):
    client = harness.client("openai", estimate_only=True)
    first = client.run(SUMMARIZE_PASSAGES, question="What links tokens?", passages=PASSAGES)
    # The chain goes on with the offline answer, as the next step's input.
    second = client.run(
        SUMMARIZE_PASSAGES, question="Summarize.", passages=[{"id": "s", "text": first.summary}]
    )

    (estimate,) = client.estimates()
    assert second.summary
    assert harness.server.requests == []
    assert harness.ledger().rows() == []
    assert estimate.items == 2 and estimate.cached_items == 0
    assert estimate.input_tokens > 0 and estimate.cost_usd > 0
    assert estimate.provider == "openai" and estimate.model == "gpt-4o-mini"


def test_an_estimate_goes_on_with_the_answer_a_build_got_where_the_prompt_was_asked_before(harness: Harness):
    harness.server.default = Reply(VALID_ANSWER)
    asked = {"question": "What links tokens?", "passages": PASSAGES}
    real = harness.client("openai").run(SUMMARIZE_PASSAGES, **asked)

    client = harness.client("openai", estimate_only=True)
    again = client.run(SUMMARIZE_PASSAGES, **asked)
    fresh = client.run(SUMMARIZE_PASSAGES, question="Something not asked yet?", passages=PASSAGES)

    assert again == real  # what the build will get, so later steps are planned on it
    assert fresh.summary != real.summary  # the offline answer
    (estimate,) = client.estimates()
    assert estimate.items == 2 and estimate.cached_items == 1
    assert len(harness.server.requests) == 1


def test_an_estimate_fails_what_the_build_would_fail_from_the_record(harness: Harness):
    harness.server.queue(Failure(400, "this request is refused"))
    asked = {"question": "What links tokens?", "passages": PASSAGES}
    with pytest.raises(LLMError):
        harness.client("openai").run(SUMMARIZE_PASSAGES, **asked)

    with pytest.raises(InvalidOutputError, match="failed for good when last asked"):
        harness.client("openai", estimate_only=True).run(SUMMARIZE_PASSAGES, **asked)
    retrying = harness.client("openai", estimate_only=True, retry_failed=True)
    assert retrying.run(SUMMARIZE_PASSAGES, **asked).summary  # asked again: the offline answer
    (estimate,) = retrying.estimates()
    assert estimate.cached_items == 0


def test_a_request_planned_twice_is_one_call_to_make_as_the_cache_makes_it(harness: Harness):
    """Two steps of a build that ask the same prompt pay once: the second reads the first's answer."""
    asked = {"question": "What links tokens?", "passages": PASSAGES}
    client = harness.client("openai", estimate_only=True)
    for _ in range(2):
        client.run(SUMMARIZE_PASSAGES, **asked)
    client.run(SUMMARIZE_PASSAGES, question="Another question?", passages=PASSAGES)
    (estimate,) = client.estimates()
    assert (estimate.items, estimate.cached_items) == (3, 1)
    assert estimate.input_tokens == prompt_tokens(asked) + prompt_tokens(
        {"question": "Another question?", "passages": PASSAGES}
    )

    twice = harness.client("openai").dry_run(SUMMARIZE_PASSAGES, [asked, asked])
    assert (twice.items, twice.cached_items) == (2, 1)
    # Without a cache a build asks it twice, and pays twice.
    uncached = harness.client("openai", cache=False).dry_run(SUMMARIZE_PASSAGES, [asked, asked])
    assert (uncached.items, uncached.cached_items) == (2, 0)
    assert harness.server.requests == []
