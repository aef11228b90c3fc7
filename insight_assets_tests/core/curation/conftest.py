from __future__ import annotations

import hashlib
import re
import socket
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from insight_assets.core.curation import CompressedDocument, compress_documents
from insight_assets.core.llm import LLMClient, LLMSettings
from insight_assets_tests.core.curation.papers import PAPERS
from insight_assets_tests.fake_model_server import FakeModelServer

_DIMENSION = 256


def hashing_embed(texts: list[str]) -> np.ndarray:
    """A deterministic bag-of-words embedding: each word adds one to a hashed coordinate."""
    vectors = np.zeros((len(texts), _DIMENSION))
    for row, text in enumerate(texts):
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            vectors[row, int(hashlib.sha256(word.encode()).hexdigest(), 16) % _DIMENSION] += 1
    return vectors


@pytest.fixture(autouse=True)
def only_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test whose code tries to connect anywhere but this machine."""
    original_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in ("127.0.0.1", "::1"):
            raise AssertionError(f"a test tried to reach {address[0]}")
        return original_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.fixture(scope="session")
def compressed() -> list[CompressedDocument]:
    outcome = compress_documents(LLMClient(LLMSettings()), PAPERS)
    assert not outcome.failures
    return outcome.compressed


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    fake = FakeModelServer().start()
    yield fake
    fake.stop()


def fake_client(server: FakeModelServer, **client_options: Any) -> LLMClient:
    """An OpenAI client on the fake server, one call at a time so queued replies go in order."""
    settings = LLMSettings(
        provider="openai",
        base_url=f"{server.url}/v1",
        api_key="k",
        model="gpt-4o-mini",
        max_retries=0,
        max_concurrency=1,
        timeout_s=5.0,
    )
    return LLMClient(settings, **client_options)
