"""Compression: offline it selects from the paper; cut input, failures and token counts."""

from __future__ import annotations

import pytest

from insight_assets.core.curation import (
    CompressionSettings,
    SourceDocument,
    compress_documents,
    compression_inputs,
)
from insight_assets.core.llm import LLMClient, LLMSettings
from insight_assets.core.text import count_tokens
from insight_assets_tests.core.curation.papers import PAPERS


def test_offline_compression_is_extractive_and_rendered_compactly(compressed):
    assert [doc.document_id for doc in compressed] == [paper.document_id for paper in PAPERS]
    for doc, paper in zip(compressed, PAPERS):
        flat = " ".join(paper.text.split())
        statements = doc.contributions + doc.key_findings + doc.conclusions
        assert doc.main_topics and doc.contributions
        assert all(statement in flat for statement in statements)
        assert all(len(field) <= 6 for field in (doc.main_topics, doc.contributions, doc.key_findings))
        assert doc.text.startswith(f"Title: {paper.title}\nMain topics: ")
        assert all(f"- {statement}" in doc.text for statement in statements)
        assert (doc.tokens, doc.source_tokens) == (count_tokens(doc.text), count_tokens(paper.text))
    gptq = compressed[0]
    assert any(s.startswith("We propose GPTQ") for s in gptq.contributions)
    assert any("3.2x speedup" in s for s in gptq.key_findings)
    assert any(s.startswith("In conclusion") for s in gptq.conclusions)
    assert "quantization" in gptq.main_topics


def test_offline_compression_is_deterministic(compressed):
    again = compress_documents(LLMClient(LLMSettings()), PAPERS)
    assert again.compressed == compressed


def test_body_is_cut_to_max_input_tokens_and_fields_to_max_items():
    settings = CompressionSettings(max_input_tokens=60, max_items_per_field=2)
    inputs = compression_inputs(PAPERS[0], settings)
    assert count_tokens(inputs["text"]) == 60 and PAPERS[0].text.startswith(inputs["text"])

    [doc] = compress_documents(LLMClient(LLMSettings()), PAPERS[:1], settings).compressed
    assert doc.source_tokens == 60
    assert all(len(field) <= 2 for field in (doc.main_topics, doc.contributions, doc.conclusions))


def test_documents_without_text_fail_alone_and_untitled_ones_are_named_by_id():
    documents = [SourceDocument("empty", "Nothing", "  \n"), SourceDocument("untitled", "", PAPERS[1].text)]
    outcome = compress_documents(LLMClient(LLMSettings()), documents)
    assert [failure.item for failure in outcome.failures] == ["empty"]
    assert [(doc.document_id, doc.title) for doc in outcome.compressed] == [("untitled", "untitled")]


def test_repeated_document_ids_are_refused():
    with pytest.raises(ValueError, match="distinct"):
        compress_documents(LLMClient(LLMSettings()), [PAPERS[0], PAPERS[0]])
