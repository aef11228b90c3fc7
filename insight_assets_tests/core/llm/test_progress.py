"""A client says, after each item, how far its work has come: what a build shows while a step works."""

from __future__ import annotations

import json

from insight_assets.core.llm import SUMMARIZE_PASSAGES, CallProgress, LLMClient
from insight_assets_tests.fake_model_server import Reply

from .conftest import PASSAGES, Harness, make_settings


def test_a_client_reports_calls_done_of_planned_with_tokens_and_cost(harness: Harness):
    harness.server.default = Reply(
        json.dumps({"summary": "Attention.", "cited_ids": ["p1"]}), input_tokens=1000, output_tokens=100
    )
    heard: list[CallProgress] = []
    client = LLMClient(make_settings("openai", harness.server), progress=heard.append)
    items = [{"question": f"Question {n}?", "passages": PASSAGES} for n in range(3)]

    client.run_many(SUMMARIZE_PASSAGES, items, max_concurrency=1)
    client.run(SUMMARIZE_PASSAGES, question="One more?", passages=PASSAGES)

    assert [(said.done, said.planned) for said in heard] == [(1, 3), (2, 3), (3, 3), (4, 4)]
    assert [said.input_tokens for said in heard] == [1000, 2000, 3000, 4000]
    assert heard[-1].output_tokens == 400 and heard[-1].cost_usd > heard[0].cost_usd > 0
    assert str(heard[1]) == f"2 of 3 model calls, 2,200 tokens, ${heard[1].cost_usd:.4f}"


def test_a_failed_item_counts_as_done(harness: Harness):
    harness.server.default = Reply("not json at all")  # the repair gets the same: the item fails
    heard: list[CallProgress] = []
    client = LLMClient(make_settings("openai", harness.server), progress=heard.append)

    batch = client.run_many(SUMMARIZE_PASSAGES, [{"question": "Why?", "passages": PASSAGES}] * 2)

    assert [item.status for item in batch.items] == ["failed", "failed"]
    assert [(said.done, said.planned) for said in heard] == [(1, 2), (2, 2)]


def test_nothing_spent_is_not_said():
    assert str(CallProgress(1, 2, 0, 0, 0.0)) == "1 of 2 model calls"  # the offline provider's calls
