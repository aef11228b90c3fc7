"""Fixtures for the method tests: a client that talks to the fake model server."""

from __future__ import annotations

import pytest

from insight_assets.core.llm import LLMClient
from insight_assets_tests.core.conftest import fake_openai_client
from insight_assets_tests.fake_model_server import FakeModelServer


@pytest.fixture
def model_client(server: FakeModelServer) -> LLMClient:
    """An OpenAI-provider client whose requests go to the fake server; no cache, no waiting."""
    return fake_openai_client(server, sleep=lambda seconds: None)
