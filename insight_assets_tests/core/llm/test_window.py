"""Context windows: prompts are trimmed in the task's order to fit, or the item fails with
``context_too_long``; nothing is sent that cannot fit."""

from __future__ import annotations

import json

import pytest

from insight_assets.core.curation.compression import COMPRESS_DOCUMENT
from insight_assets.core.llm import SUMMARIZE_PASSAGES
from insight_assets.core.llm.client import count_message_tokens
from insight_assets.core.llm.pricing import context_window
from insight_assets.core.llm.providers import Message
from insight_assets.core.llm.window import fit_to_window
from insight_assets.core.text import count_tokens
from insight_assets_tests.fake_model_server import Reply

from .conftest import Harness

QUESTION = "What do the passages say about attention?"
# Twelve passages of ~60 tokens each: about 800 tokens of passages in all.
PASSAGES = [
    {
        "id": f"p{i}",
        "text": f"Passage {i} says attention mixes tokens. " + "Attention weighs every token. " * 10,
    }
    for i in range(1, 13)
]
ANSWER = json.dumps({"summary": "Attention mixes tokens.", "cited_ids": ["p1"]})


def _inputs() -> dict:
    return {"question": QUESTION, "passages": PASSAGES, "max_sentences": 3}


def _prompt_tokens(passages: list[dict]) -> int:
    return count_tokens(SUMMARIZE_PASSAGES.render({**_inputs(), "passages": passages}))


def test_a_prompt_too_long_for_the_window_loses_its_last_passages_and_says_so(harness: Harness):
    harness.server.queue(Reply(ANSWER))
    # Room for the first five passages and max_tokens, not for six.
    window = (_prompt_tokens(PASSAGES[:5]) + _prompt_tokens(PASSAGES[:6])) // 2 + 100 + 8
    client = harness.client("openai-compatible", context_tokens=window, max_tokens=100)

    batch = client.run_many(SUMMARIZE_PASSAGES, [_inputs()])

    [item] = batch.items
    assert item.ok and item.trimmed == (
        f"dropped the last 7 of 12 items of passages to fit a {window}-token window"
    )
    [request] = harness.server.requests
    sent = request.last_user_text()
    assert "[p5]" in sent and "[p6]" not in sent
    assert count_message_tokens_of(sent) + 100 <= window
    assert client.summary().as_metadata()["llm_trimmed_items"] == 1


def count_message_tokens_of(text: str) -> int:
    return count_message_tokens([Message("user", text)])


def test_when_even_one_passage_does_not_fit_the_item_fails_with_context_too_long_and_nothing_is_sent(
    harness: Harness,
):
    harness.server.queue(Reply(json.dumps({"summary": "The passages say nothing.", "cited_ids": []})))
    window = _prompt_tokens(PASSAGES[:1]) + 100 - 20  # one passage and the answer's room: too much
    client = harness.client("openai-compatible", context_tokens=window, max_tokens=100)

    batch = client.run_many(SUMMARIZE_PASSAGES, [_inputs(), {**_inputs(), "passages": []}])

    too_long, empty = batch.items
    assert too_long.status == "failed" and too_long.error.startswith(
        "context_too_long: task summarize_passages@v1"
    )
    assert f"context window of {window}" in too_long.error
    assert empty.ok  # the other item of the batch goes on
    assert len(harness.server.requests) == 1
    assert client.summary().failed_items == 1


def test_a_text_input_loses_whole_sentences_from_its_end():
    sentences = [f"Sentence number {i} describes a result of the study in some detail." for i in range(200)]
    text = " ".join(sentences)
    inputs = {"title": "A study", "text": text, "max_items": 3}
    full = count_tokens(COMPRESS_DOCUMENT.render(inputs))

    fitted = fit_to_window(COMPRESS_DOCUMENT, inputs, count=count_tokens, window=full, max_tokens=1000)

    kept = fitted.inputs["text"]
    assert text.startswith(kept) and kept.endswith("in some detail.")
    dropped = 200 - kept.count("Sentence number")
    assert dropped > 0 and fitted.trimmed.startswith(f"dropped the last {dropped} of 200 sentences of text")
    assert fitted.prompt_tokens + 1000 + 8 <= full
    # One more sentence would not have fit.
    longer = {**inputs, "text": " ".join(sentences[: 200 - dropped + 1])}
    assert count_tokens(COMPRESS_DOCUMENT.render(longer)) + 1000 + 8 > full


def test_a_prompt_that_fits_is_sent_as_it_is(harness: Harness):
    harness.server.queue(Reply(ANSWER))
    client = harness.client("openai-compatible", context_tokens=32_000)

    batch = client.run_many(SUMMARIZE_PASSAGES, [_inputs()])

    assert batch.items[0].ok and batch.items[0].trimmed is None
    assert "[p12]" in harness.server.requests[0].last_user_text()
    assert "llm_trimmed_items" not in client.summary().as_metadata()


def test_hosted_models_know_their_window_and_unknown_ones_do_not():
    assert context_window("openai", "gpt-4o-mini-2024-07-18") == 128_000
    assert context_window("anthropic", "claude-sonnet-4-5") == 200_000
    assert context_window("openai-compatible", "llama3.1:8b") is None


def test_the_window_can_come_from_the_environment(monkeypatch):
    from insight_assets.core.llm import ConfigurationError
    from insight_assets.defs.resources import LLMResource

    monkeypatch.setenv("INSIGHT_ASSETS_LLM_CONTEXT_TOKENS", "4096")
    assert LLMResource().settings().context_tokens == 4096
    assert LLMResource(context_tokens=2048).settings().context_tokens == 2048
    monkeypatch.setenv("INSIGHT_ASSETS_LLM_CONTEXT_TOKENS", "4k")
    with pytest.raises(ConfigurationError, match="INSIGHT_ASSETS_LLM_CONTEXT_TOKENS must be a number"):
        LLMResource().settings()
