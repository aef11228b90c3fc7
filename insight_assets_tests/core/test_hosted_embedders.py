"""Hosted embedders through the real SDKs, against a protocol fake on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from insight_assets.core.embedding.models import (
    EmbeddingError,
    GeminiEmbedder,
    OpenAIEmbedder,
    create_embedder,
)
from insight_assets_tests.fake_model_server import Failure, FakeModelServer, Reply, fake_vector

TEXTS = [f"passage number {i} about citation graphs" for i in range(5)]


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    fake = FakeModelServer().start()
    fake.default = Reply("")  # every embedding request is answered from its own texts
    yield fake
    fake.stop()


def expected(texts: list[str]) -> np.ndarray:
    vectors = np.array([fake_vector(text) for text in texts], dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_openai_compatible_embedder_batches_orders_and_normalises(server):
    embedder = create_embedder(
        "openai-compatible", model="nomic-embed-text", base_url=f"{server.url}/v1", batch_size=2
    )
    vectors = embedder.embed(TEXTS)
    assert np.allclose(vectors, expected(TEXTS), atol=1e-6)
    assert [len(r.body["input"]) for r in server.requests] == [2, 2, 1]
    assert {r.body["model"] for r in server.requests} == {"nomic-embed-text"}
    assert embedder.variant == "openai-compatible:nomic-embed-text" and embedder.dimension == 8


def test_openai_embedder_sends_the_key_it_was_given(server):
    embedder = OpenAIEmbedder(
        model="text-embedding-3-small", api_key="sk-test-123", base_url=f"{server.url}/v1"
    )
    embedder.embed(TEXTS[:1])
    headers = {name.lower(): value for name, value in server.requests[0].headers.items()}
    assert headers["authorization"] == "Bearer sk-test-123"


def test_gemini_embedder_uses_batch_embed_contents(server):
    embedder = GeminiEmbedder(
        model="gemini-embedding-001", api_key="g-key", base_url=server.url, batch_size=3
    )
    vectors = embedder.embed(TEXTS)
    assert np.allclose(vectors, expected(TEXTS), atol=1e-6)
    assert [r.path.split("?")[0].rsplit("/", 1)[-1] for r in server.requests] == [
        "gemini-embedding-001:batchEmbedContents"
    ] * 2
    assert {name.lower(): value for name, value in server.requests[0].headers.items()}[
        "x-goog-api-key"
    ] == "g-key"
    assert embedder.variant == "gemini:gemini-embedding-001"


def test_a_transient_error_is_retried(server):
    server.queue(Failure(503, "busy", headers={"Retry-After": "0"}))
    embedder = OpenAIEmbedder(model="m", api_key="k", base_url=f"{server.url}/v1")
    assert np.allclose(embedder.embed(TEXTS[:1]), expected(TEXTS[:1]), atol=1e-6)
    assert len(server.requests) == 2


def test_a_persistent_error_says_what_failed_instead_of_returning_vectors(server):
    server.queue(*[Failure(500, "model crashed", headers={"Retry-After": "0"})] * 3)
    embedder = OpenAIEmbedder(model="m", api_key="k", base_url=f"{server.url}/v1", max_retries=2)
    with pytest.raises(EmbeddingError, match="openai-compatible:m embedder failed: .*model crashed"):
        embedder.embed(TEXTS[:1])
    assert len(server.requests) == 3


def test_a_wrong_gemini_key_fails_with_a_clear_message(server):
    server.queue(Failure(400, "API key not valid. Please pass a valid API key."))
    embedder = GeminiEmbedder(model="gemini-embedding-001", api_key="wrong", base_url=server.url)
    with pytest.raises(EmbeddingError, match=r"failed \(400\): API key not valid"):
        embedder.embed(TEXTS[:1])


def test_a_batch_that_keeps_failing_is_recorded_and_the_others_are_embedded(server):
    server.poison_embeddings("number 2", Failure(500, "model crashed", headers={"retry-after-ms": "1"}))
    embedder = OpenAIEmbedder(
        model="m", api_key="k", base_url=f"{server.url}/v1", batch_size=2, max_retries=2
    )
    outcome = embedder.embed_partial(TEXTS)
    # Batches [0, 1], [2, 3], [4]: the second holds "number 2" and fails on every retry.
    assert sorted(outcome.errors) == [2, 3]
    assert all("model crashed" in reason for reason in outcome.errors.values())
    assert outcome.vectors[2] is None and outcome.vectors[3] is None
    kept = [0, 1, 4]
    assert np.allclose(
        np.stack([outcome.vectors[i] for i in kept]), expected([TEXTS[i] for i in kept]), atol=1e-6
    )
    poisoned = [r for r in server.requests if "number 2" in " ".join(r.body["input"])]
    assert len(poisoned) == 3  # the first try and two retries
    with pytest.raises(EmbeddingError, match="model crashed"):
        embedder.embed(TEXTS)  # the all-or-nothing call still raises


def test_a_refused_key_fails_the_whole_call_at_once(server):
    server.queue(Failure(401, "Incorrect API key provided"))
    embedder = OpenAIEmbedder(model="m", api_key="wrong", base_url=f"{server.url}/v1", batch_size=2)
    with pytest.raises(EmbeddingError, match="Incorrect API key.*API key's environment variable"):
        embedder.embed_partial(TEXTS)
    assert len(server.requests) == 1  # no further batch was tried
