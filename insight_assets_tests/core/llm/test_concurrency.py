"""run_many keeps to its concurrency limit and keeps results in input order."""

from __future__ import annotations

import json

from insight_assets.core.llm import SUMMARIZE_PASSAGES
from insight_assets_tests.fake_model_server import Reply

from .conftest import PASSAGES, Harness


def test_run_many_never_exceeds_its_concurrency_limit(harness: Harness):
    harness.server.default = Reply(json.dumps({"summary": "Attention.", "cited_ids": ["p1"]}), delay_s=0.15)
    items = [{"question": f"Question {n}?", "passages": PASSAGES} for n in range(8)]

    batch = harness.client("openai", cache=False).run_many(SUMMARIZE_PASSAGES, items, max_concurrency=3)

    assert [item.status for item in batch.items] == ["ok"] * 8
    assert [item.index for item in batch.items] == list(range(8))
    assert len(harness.server.requests) == 8
    assert harness.server.max_in_flight == 3


def test_the_settings_give_the_default_limit(harness: Harness):
    harness.server.default = Reply(json.dumps({"summary": "Attention.", "cited_ids": ["p2"]}), delay_s=0.1)
    items = [{"question": f"Question {n}?", "passages": PASSAGES} for n in range(4)]

    harness.client("anthropic", cache=False, max_concurrency=2).run_many(SUMMARIZE_PASSAGES, items)

    assert harness.server.max_in_flight == 2
