"""The embedders: the bundled model embeds long texts whole; vectors are unit length."""

from __future__ import annotations

import numpy as np
import pytest

from insight_assets.core.embedding import EmbeddingError, HashingEmbedder, LocalEmbedder, create_embedder

SENTENCE = "Citation-informed transformers learn document-level representations of scientific papers. "


@pytest.fixture(scope="module")
def local() -> LocalEmbedder:
    return LocalEmbedder(batch_size=16)


def test_short_text_is_one_window_and_matches_the_bare_model(local):
    (window,) = local.windows(SENTENCE)
    assert window[0] == SENTENCE
    bare = local.model.encode([SENTENCE], normalize_embeddings=True)[0]
    assert float(np.dot(local.embed([SENTENCE])[0], bare)) > 0.9999


def test_long_text_is_embedded_over_all_its_windows_not_truncated(local):
    head = SENTENCE * 30
    tail = "Quantum chromodynamics describes gluons binding quarks inside protons and neutrons. " * 30
    windows = local.windows(head + tail)
    assert len(windows) >= 4
    assert all(pieces <= local.window_tokens for _, pieces in windows)
    # Every window re-tokenizes within the model's limit, so nothing is cut by the model either.
    assert all(len(local.model.tokenizer(text, add_special_tokens=False)["input_ids"]) <= 254 for text, _ in windows)
    assert "".join(text for text, _ in windows).replace(" ", "") == (head + tail).replace(" ", "")

    whole, head_only, tail_only = local.embed([head + tail, head, tail])
    assert np.isclose(np.linalg.norm(whole), 1.0, atol=1e-5)
    # The tail half past the model's 256-piece limit still shapes the vector.
    assert np.dot(whole, tail_only) > 0.5 and np.dot(whole, head_only) > 0.5
    truncated = local.model.encode([head + tail], normalize_embeddings=True)[0]
    assert np.dot(whole, tail_only) > np.dot(truncated, tail_only) + 0.2


def test_variant_names_model_and_method(local):
    assert local.variant == "local:all-MiniLM-L6-v2:win254:meanpool:fp32"
    assert local.embed([]).shape == (0, 384)


def test_hashing_embedder_is_deterministic_and_lexical():
    embedder = HashingEmbedder()
    a, b, c = embedder.embed(["graph neural networks", "neural networks on graphs", "protein folding kinetics"])
    assert np.allclose(embedder.embed(["graph neural networks"])[0], a)
    assert np.dot(a, b) > np.dot(a, c)
    assert np.isclose(np.linalg.norm(a), 1.0)


@pytest.mark.parametrize(
    ("provider", "kwargs", "message"),
    [
        ("cohere", {}, "Unknown embedding provider"),
        ("openai", {}, "needs a model name"),
        ("openai", {"model": "text-embedding-3-small"}, "needs an API key"),
        ("openai-compatible", {"model": "nomic-embed-text"}, "needs base_url"),
    ],
)
def test_misconfigured_embedders_say_what_to_fix(provider, kwargs, message):
    with pytest.raises(EmbeddingError, match=message):
        create_embedder(provider, **kwargs)
