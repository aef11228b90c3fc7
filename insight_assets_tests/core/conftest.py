"""Fixtures for every core test: no network but this machine, and a client of the fake model server."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from insight_assets.core.llm import LLMClient, LLMSettings
from insight_assets_tests.fake_model_server import FakeModelServer

LOOPBACK = ("127.0.0.1", "::1", "localhost")


@pytest.fixture(autouse=True)
def only_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test whose code tries to connect anywhere but this machine."""
    original_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOOPBACK:
            raise AssertionError(f"a test tried to reach {address[0]}: only 127.0.0.1 is allowed")
        return original_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


def fake_openai_client(
    server: FakeModelServer, *, settings: dict[str, Any] | None = None, **client_options: Any
) -> LLMClient:
    """An OpenAI-provider client whose requests go to ``server``: no retries, no cache."""
    values: dict[str, Any] = {
        "provider": "openai",
        "model": "gpt-4o-mini",
        "base_url": f"{server.url}/v1",
        "api_key": "test-key",
        "max_retries": 0,
        "timeout_s": 5.0,
        **(settings or {}),
    }
    return LLMClient(LLMSettings(**values), **client_options)
