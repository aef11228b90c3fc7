"""Fixtures for the method tests: the fake model server and a client that talks to it."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from insight_assets.core.llm import LLMClient, LLMSettings
from insight_assets_tests.fake_model_server import FakeModelServer


@pytest.fixture(autouse=True)
def only_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    original_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in ("127.0.0.1", "::1"):
            raise AssertionError(f"a test tried to reach {address[0]}: only 127.0.0.1 is allowed")
        return original_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    fake = FakeModelServer().start()
    yield fake
    fake.stop()


@pytest.fixture
def model_client(server: FakeModelServer) -> LLMClient:
    """An OpenAI-provider client whose requests go to the fake server; no cache, no waiting."""
    settings = LLMSettings(
        provider="openai", model="gpt-4o-mini", base_url=f"{server.url}/v1", api_key="test-key", max_retries=0
    )
    return LLMClient(settings, sleep=lambda seconds: None)
