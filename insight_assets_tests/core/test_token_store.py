"""The reranker's token vectors kept with the build: what is read back scores as the model's own,
texts gone are dropped, new ones encoded, and nothing is rewritten when nothing changed."""

from __future__ import annotations

import numpy as np
import pytest

from insight_assets.core.retrieval import LateInteraction
from insight_assets.core.retrieval.token_store import StoredTokens, keep_token_vectors

PASSAGES = [
    "Citation graphs link papers to the papers they cite, and their structure predicts impact.",
    "Sentence embeddings from contrastive learning transfer well to semantic similarity tasks.",
    "Table extraction from scanned PDFs needs layout analysis before any text is read.",
    "Named entity recognition in scientific text finds methods, datasets and metrics.",
]


@pytest.fixture(scope="module")
def model() -> LateInteraction:
    return LateInteraction(cache_size=0)  # no process cache: every score below is computed or read


def test_kept_token_vectors_score_as_the_models_own(tmp_path, model):
    counts = keep_token_vectors(str(tmp_path), "papers", PASSAGES, model.token_vectors)
    assert counts["token_vector_texts"] == 4 and counts["token_vectors_encoded"] == 4
    assert counts["token_vector_bytes"] > 4 * 10 * 384  # int8: a byte per component, 10+ tokens each
    stored = StoredTokens.load(str(tmp_path), "papers")
    assert len(stored) == 4 and stored.get("not a kept text") is None
    query = "how do papers cite each other"
    fresh = model.score(query, PASSAGES)
    read = LateInteraction(cache_size=0, stored=stored).score(query, PASSAGES)
    assert np.allclose(fresh, read, atol=0.01)
    assert int(np.argmax(read)) == 0


def test_a_rebuild_encodes_only_new_texts_and_drops_gone_ones(tmp_path, model):
    encoded: list[list[str]] = []

    def counting(texts):
        encoded.append(list(texts))
        return model.token_vectors(texts)

    keep_token_vectors(str(tmp_path), "papers", PASSAGES[:3], counting)
    unchanged = keep_token_vectors(str(tmp_path), "papers", PASSAGES[:3], counting)
    assert unchanged["token_vectors_encoded"] == 0 and unchanged["token_vectors_dropped"] == 0
    changed = keep_token_vectors(str(tmp_path), "papers", PASSAGES[1:], counting)
    assert changed["token_vectors_encoded"] == 1 and changed["token_vectors_dropped"] == 1
    assert encoded == [PASSAGES[:3], [PASSAGES[3]]]
    stored = StoredTokens.load(str(tmp_path), "papers")
    assert stored.get(PASSAGES[0]) is None and stored.get(PASSAGES[3]) is not None
    assert StoredTokens.load(str(tmp_path), "another collection") is None


def test_the_embedding_pass_gives_the_rerankers_token_vectors(model):
    from insight_assets.core.embedding.models import LocalEmbedder

    embedder = LocalEmbedder(precision=model._embedder.precision)
    assert model.shares_model_with(embedder)
    assert not model.shares_model_with(
        LocalEmbedder(precision="bf16" if embedder.precision == "fp32" else "fp32")
    )
    long_text = " ".join(PASSAGES * 12)  # read in windows: no one pass holds its tokens
    vectors, tokens = embedder.embed_with_token_vectors([*PASSAGES, long_text])
    assert np.allclose(vectors, embedder.embed_batched([*PASSAGES, long_text]), atol=1e-5)
    assert tokens[-1] is None
    for mine, reranker_own in zip(tokens[:-1], model.token_vectors(PASSAGES), strict=True):
        assert mine.dtype == np.float16 and mine.shape == reranker_own.shape
        cosines = np.sum(mine.astype(np.float32) * reranker_own.astype(np.float32), axis=1)
        assert cosines.min() > 0.99  # the same rows; batches padded otherwise round otherwise
