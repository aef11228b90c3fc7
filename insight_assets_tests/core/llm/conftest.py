from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from insight_assets.core.llm import (
    Budget,
    CallContext,
    CallLedger,
    LLMClient,
    LLMSettings,
    ResponseCache,
)
from insight_assets_tests.fake_model_server import FakeModelServer

# Shaped like no provider's key, so only the exact-value redaction can hide it.
SECRET = "fake-KEY-7f3a9c2e11d4"

NETWORK_PROVIDERS = ("openai", "openai-compatible", "anthropic", "gemini")

MODELS = {
    "openai": "gpt-4o-mini",
    "openai-compatible": "llama3.1:8b",
    "anthropic": "claude-3-5-haiku-latest",
    "gemini": "gemini-2.0-flash",
}

PASSAGES = [
    {"id": "p1", "text": "Self-attention relates every token to every other token in one step."},
    {"id": "p2", "text": "Recurrent networks pass information along the sequence one token at a time."},
]

VALID_ANSWER = json.dumps({"summary": "Self-attention links distant tokens directly.", "cited_ids": ["p1"]})


@dataclass
class FakeClock:
    """Time that moves only when someone sleeps: waits are recorded, never waited."""

    now: float = 1000.0
    sleeps: list[float] = field(default_factory=list)

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def base_url_for(provider: str, server: FakeModelServer) -> str:
    # OpenAI-style SDK base URLs include the /v1 prefix; Anthropic's and Gemini's do not.
    return f"{server.url}/v1" if provider in ("openai", "openai-compatible") else server.url


def make_settings(provider: str, server: FakeModelServer, **changes: Any) -> LLMSettings:
    values: dict[str, Any] = {
        "provider": provider,
        "model": MODELS[provider],
        "base_url": base_url_for(provider, server),
        "api_key": SECRET,
        "max_retries": 3,
        "max_total_retry_s": 60.0,
        "initial_backoff_s": 0.05,
        "timeout_s": 5.0,
    }
    values.update(changes)
    return LLMSettings(**values)


@dataclass
class Harness:
    """A client wired to the fake server, with persistent stores under a temporary data dir."""

    server: FakeModelServer
    clock: FakeClock
    data_dir: Path

    def client(
        self,
        provider: str,
        *,
        budget: Budget | None = None,
        cache: bool = True,
        context: CallContext | None = None,
        estimate_only: bool = False,
        **changes: Any,
    ) -> LLMClient:
        return LLMClient(
            make_settings(provider, self.server, **changes),
            cache=ResponseCache.in_data_dir(self.data_dir) if cache else None,
            ledger=CallLedger.in_data_dir(self.data_dir),
            budget=budget,
            context=context or CallContext(asset="test_asset", partition="2024", run_id="run-1"),
            sleep=self.clock.sleep,
            clock=self.clock.monotonic,
            rng=random.Random(0),
            estimate_only=estimate_only,
        )

    def ledger(self) -> CallLedger:
        return CallLedger.in_data_dir(self.data_dir)


@pytest.fixture
def harness(server: FakeModelServer, clock: FakeClock, tmp_path: Path) -> Harness:
    return Harness(server, clock, tmp_path / "data")
