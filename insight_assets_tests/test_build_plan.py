"""The plan a hosted build shows before its first call: calls, price and budget in words."""

import pytest

from insight_assets.app.build_plan import describe_plan
from insight_assets.core.llm import ConfigurationError, DryRunEstimate
from insight_assets.defs.resources import BUDGET_USD_ENV, LLMResource


def estimate(task: str, items: int, cached: int, cost: float | None) -> DryRunEstimate:
    return DryRunEstimate(
        task=task,
        provider="openai",
        model="gpt-4o-mini",
        items=items,
        cached_items=cached,
        input_tokens=1000 * (items - cached),
        output_tokens=200 * (items - cached),
        max_output_tokens=4000 * (items - cached),
        cost_usd=cost,
        max_cost_usd=None if cost is None else 10 * cost,
    )


def test_the_plan_says_the_calls_to_make_the_cached_answers_the_price_and_the_budget():
    lines = describe_plan([estimate("a", 1200, 200, 1.5), estimate("b", 34, 0, 0.25)], 5.0, None)
    assert lines == [
        (
            "Plan: 1,034 model calls to make, 200 answered from the cache; about $1.75 "
            "(at most $17.50 if every answer used its max_tokens)."
        ),
        "Budget: $5.00 for the run; a call that could pass it is not sent.",
    ]


def test_a_model_without_a_price_is_planned_in_tokens_and_an_unset_budget_is_said():
    lines = describe_plan([estimate("a", 10, 0, None), estimate("b", 5, 5, 0.0)], None, 20_000)
    assert (
        lines[0]
        == "Plan: 10 model calls to make, 5 answered from the cache; about 12,000 tokens (the model has no price: its cost is unknown)."
    )
    assert lines[1] == "Budget: 20,000 tokens for the run; a call that could pass it is not sent."
    assert describe_plan([], None, None)[1].startswith("Budget: none set (build --budget-usd")


def test_the_budget_of_build_budget_usd_reaches_every_step_through_the_environment(monkeypatch):
    monkeypatch.setenv(BUDGET_USD_ENV, "2.5")
    assert LLMResource().run_budget_usd() == 2.5
    assert LLMResource(budget_usd=1.0).run_budget_usd() == 1.0  # the resource's own comes first
    monkeypatch.setenv(BUDGET_USD_ENV, "free")
    with pytest.raises(ConfigurationError, match="must be an amount of US dollars above 0, not 'free'"):
        LLMResource().run_budget_usd()


def test_the_steps_a_plan_could_not_price_are_named():
    lines = describe_plan([estimate("a", 3, 0, 0.1)], None, None, ["insight_rag_answers", "scipip_ideas"])
    assert lines[1] == (
        "Not in the plan: insight_rag_answers, scipip_ideas, priced only once what they read (made by "
        "the model's earlier steps) is built."
    )
