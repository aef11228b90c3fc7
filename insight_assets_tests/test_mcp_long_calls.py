"""A long call on the MCP server, as an assistant meets it over HTTP with the bundled local model:
``ask`` of every method reports its progress and log lines, searches are answered while it runs
(not after it: how fast is the benchmark's to say, `python -m bench mcp`), and cancelling it stops
the model calls."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import uuid
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from insight_assets_tests.command_line import BuiltProject
from insight_assets_tests.servers import mcp_over_http

pytestmark = pytest.mark.local_model

METHODS = 5  # every method answers an ask with method "all"


def _model_calls(project: Path, after: float, before: float) -> int:
    """The model calls the server's asks made between two moments (``time.time()``), by its ledger:
    answers from the cache, or failures from their record, are rows but no call."""
    with sqlite3.connect(project / "data" / "cache" / "llm_ledger.sqlite") as connection:
        return connection.execute(
            "SELECT count(*) FROM calls WHERE asset = 'ask' AND NOT cache_hit AND created_at > ? AND created_at < ?",
            [after, before],
        ).fetchone()[0]


def _stamped_lines(stream, lines: list[tuple[float, str]]) -> threading.Thread:
    """A thread appending each line of ``stream`` with the moment (``time.time()``) it was read."""

    def read() -> None:
        for line in stream:
            lines.append((time.time(), line))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader


def _heard_at(lines: list[tuple[float, str]], text: str) -> float:
    """When the server wrote its first line holding ``text``."""
    for written_at, line in lines:
        if text in line:
            return written_at
    raise AssertionError(f"the server never said {text!r}: {[line for _, line in lines]}")


def test_an_ask_of_every_method_reports_progress_lets_searches_through_and_stops_when_cancelled(
    tmp_path, built_by_cli: BuiltProject
):
    project = built_by_cli.copy(tmp_path)
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "INSIGHT_ASSETS_LLM_PROVIDER": "local"}
    progress: list[tuple[float, float | None, str | None]] = []
    logs: list[str] = []
    calling = anyio.Event()  # a model call has been reported done
    # When each ask's InsightGen started, by its log line. (A progress notification carries only the
    # latest message: when the second ask's first calls are cached, its "started" is overtaken.)
    insightgen_started: list[float] = []
    next_started = anyio.Event()

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))
        if message and "model calls" in message:
            calling.set()

    async def on_log(params) -> None:
        logs.append(str(params.data))
        if str(params.data) == "insightgen: started":
            insightgen_started.append(time.time())
            if len(insightgen_started) == 2:
                next_started.set()

    # A question no test asked before: its answers are not in the model's cache.
    question = f"How are citation links between papers found? ({uuid.uuid4().hex[:8]})"

    async def session(url: str) -> float:
        async with Client(streamable_http_client(url), logging_callback=on_log, log_level="info") as client:
            asked_all = anyio.Event()

            async def ask_all() -> None:
                await client.call_tool(
                    "ask",
                    {"collection": "tiny", "question": question, "method": "all"},
                    progress_callback=on_progress,
                )
                asked_all.set()

            async with anyio.create_task_group() as asking:
                asking.start_soon(ask_all)
                with anyio.fail_after(600):
                    await calling.wait()
                started = time.monotonic()
                found = await client.call_tool("search", {"collection": "tiny", "query": "entity linking"})
                searched = time.monotonic() - started
                assert not found.is_error and found.structured_content["results"]
                # Answered beside the ask, not after it (which has minutes of model calls to go).
                assert not asked_all.is_set()
                asking.cancel_scope.cancel()  # the client sends notifications/cancelled
            # The next ask has the model once the call under way ends; after an "all" that went on,
            # it would start only when that one had made all its calls.
            async with anyio.create_task_group() as asking_again:
                asking_again.start_soon(
                    lambda: client.call_tool(
                        "ask", {"collection": "tiny", "question": question, "method": "insightgen"}
                    )
                )
                with anyio.fail_after(600):
                    await next_started.wait()
                asking_again.cancel_scope.cancel()
            # Counted from when the server heard of the cancel, not from when the client sent it:
            # a call may end while the notification is on its way.
            heard_cancel_at = _heard_at(server_said, "the client cancelled ask")
            assert _model_calls(project, heard_cancel_at, insightgen_started[1]) <= 1
            return searched

    server_said: list[tuple[float, str]] = []
    with mcp_over_http(project, environment) as (url, server):
        _stamped_lines(server.stderr, server_said)
        searched = anyio.run(session, url)
        print(f"a search beside the ask took {searched:.2f} s")  # a figure for people; no test of time
        # Progress counts methods, rises with each notification and says what is under way.
        assert all(total == METHODS for _, total, _ in progress)
        values = [value for value, _, _ in progress]
        assert values == sorted(values) and len(set(values)) == len(values)
        assert any("insightgen: started" in (message or "") for _, _, message in progress)
        assert "insightgen: started" in logs
        assert server.poll() is None  # the server goes on
