"""The offline provider: deterministic, extractive, grounded, and honest about it."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from insight_assets.core.extractive import rank_sentences
from insight_assets.core.llm import (
    OFFLINE_LABEL,
    SUMMARIZE_PASSAGES,
    CallLedger,
    InvalidOutputError,
    LLMClient,
    LLMSettings,
    ResponseCache,
    Task,
)
from insight_assets.core.llm.cache import offline_cache_key
from insight_assets.core.llm.passage_answers import NO_TEXT_SUMMARY, PassageSummary

PASSAGES = [
    {
        "id": "vaswani",
        "text": (
            "The Transformer relies entirely on self-attention to compute representations. "
            "Self-attention connects all positions with a constant number of operations. "
            "Training took 3.5 days on eight GPUs."
        ),
    },
    {
        "id": "hochreiter",
        "text": (
            "Recurrent networks struggle with long-range dependencies because gradients vanish. "
            "The LSTM adds gates to carry information across many steps."
        ),
    },
    {"id": "misc", "text": "We thank the reviewers. Code is available online."},
]

QUESTION = "Why does self-attention help with long-range dependencies?"


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("the offline provider opened a socket")

    monkeypatch.setattr(socket.socket, "connect", refuse)


def test_offline_summaries_are_extractive_grounded_and_deterministic(no_network, tmp_path):
    client = LLMClient(LLMSettings(), ledger=CallLedger(tmp_path / "ledger.sqlite"))

    first = client.run(SUMMARIZE_PASSAGES, question=QUESTION, passages=PASSAGES, max_sentences=2)
    second = client.run(SUMMARIZE_PASSAGES, question=QUESTION, passages=PASSAGES, max_sentences=2)

    assert first == second
    source = " ".join(passage["text"] for passage in PASSAGES)
    sentences = [s for s in first.summary.split(". ") if s]
    assert len(sentences) == 2 and all(s.rstrip(".") in source for s in sentences)
    assert "Self-attention connects all positions" in first.summary
    assert "reviewers" not in first.summary
    assert set(first.cited_ids) <= {"vaswani", "hochreiter"} and "vaswani" in first.cited_ids
    [row, _] = client.ledger.rows()
    assert (row.provider, row.model, row.cost_usd, row.input_tokens) == ("offline", "extractive", 0.0, 0)
    metadata = client.summary().as_metadata()
    assert metadata["llm_provider"] == OFFLINE_LABEL == "offline (extractive)"
    assert (metadata["llm_calls"], metadata["llm_provider_calls"]) == (2, 0)


def test_offline_batches_and_empty_inputs(no_network):
    client = LLMClient(LLMSettings(), cache=None)

    batch = client.run_many(
        SUMMARIZE_PASSAGES,
        [
            {"question": QUESTION, "passages": PASSAGES},
            {"question": QUESTION, "passages": [{"id": "empty", "text": "   "}]},
        ],
    )

    assert batch.items[0].ok and len(batch.items[0].value.summary) > 0
    assert batch.items[1].value == PassageSummary(summary=NO_TEXT_SUMMARY, cited_ids=[])


def test_an_offline_answer_is_cached_so_a_rerun_computes_only_new_inputs(no_network, tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    first = LLMClient(LLMSettings(), cache=cache)
    answer = first.run(SUMMARIZE_PASSAGES, question="q", passages=PASSAGES)

    rerun = LLMClient(LLMSettings(), cache=cache)
    assert rerun.run(SUMMARIZE_PASSAGES, question="q", passages=PASSAGES) == answer
    rerun.run(SUMMARIZE_PASSAGES, question="another question", passages=PASSAGES)

    assert [row.cache_hit for row in first.rows] == [False]
    assert [row.cache_hit for row in rerun.rows] == [True, False]
    assert len(cache) == 2


def test_an_input_without_a_faithful_json_form_is_not_cached():
    class Opaque:
        def __str__(self) -> str:
            return "the same text for every value"

    assert offline_cache_key("t", 1, {"passages": Opaque()}) is None
    numbers = offline_cache_key("t", 1, {"vector": np.arange(2000)})
    assert numbers is not None and numbers != offline_cache_key("t", 1, {"vector": np.arange(2000) + 1})


def test_an_offline_implementation_that_breaks_its_schema_is_a_clear_failure(tmp_path):
    template = tmp_path / "t.txt"
    template.write_text("Say $word as $output_schema")
    broken = Task("broken", 1, template, PassageSummary, offline=lambda word: {"summary": word})

    with pytest.raises(InvalidOutputError, match="offline implementation of task broken@v1"):
        LLMClient(LLMSettings()).run(broken, word="hi")


def test_rank_sentences_prefers_central_relevant_and_skips_duplicates():
    sentences = [
        "Attention lets every token see every other token.",
        "Attention lets every token see every other token directly.",
        "Convolutions see a fixed window of tokens around each token.",
        "The weather was nice.",
    ]

    chosen = rank_sentences(sentences, "How do tokens see other tokens?", limit=3)

    assert chosen[0] in (0, 1) and not {0, 1} <= set(chosen)
    assert rank_sentences(sentences, limit=0) == [] and rank_sentences([], limit=3) == []
