from __future__ import annotations

import hashlib
import re
from typing import Any

import numpy as np
import pytest

from insight_assets.core.curation import CompressedDocument, compress_documents
from insight_assets.core.llm import LLMClient, LLMSettings
from insight_assets_tests.core.conftest import fake_openai_client
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


@pytest.fixture(scope="session")
def compressed() -> list[CompressedDocument]:
    outcome = compress_documents(LLMClient(LLMSettings()), PAPERS)
    assert not outcome.failures
    return outcome.compressed


def fake_client(server: FakeModelServer, **client_options: Any) -> LLMClient:
    """An OpenAI client on the fake server, one call at a time so queued replies go in order."""
    return fake_openai_client(server, settings={"max_concurrency": 1}, **client_options)
