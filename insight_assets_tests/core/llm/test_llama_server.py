"""Provider ``openai-compatible`` against a real server and a real model: ``python -m llama_cpp.server``
on 127.0.0.1 with the bundled SmolLM2-135M, reached through the official OpenAI SDK. (The fake server
stays for fault injection; this is the path a user with llama.cpp, Ollama or vLLM takes.)"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from insight_assets.core.llm import CallLedger, LLMClient, LLMSettings, ResponseCache, gguf
from insight_assets_tests.core.llm import model_tasks

pytestmark = pytest.mark.local_model

SERVED_NAME = "smollm2"
START_TIMEOUT_S = 90


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory) -> Iterator[str]:
    """The server's OpenAI-style base URL; the server is stopped when the module's tests end."""
    port = _free_port()
    log = tmp_path_factory.mktemp("llama_server") / "server.log"
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(gguf.bundled_model()),
        "--model_alias", SERVED_NAME,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", "4096",
    ]  # fmt: skip
    with log.open("wb") as output:
        server = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if server.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {server.returncode}:\n{log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"llama_cpp.server did not answer within {START_TIMEOUT_S} s:\n{log.read_text()[-2000:]}"
                    )
                time.sleep(0.5)
        yield base_url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _client(base_url: str, data: Path) -> LLMClient:
    settings = LLMSettings(
        provider="openai-compatible", model=SERVED_NAME, base_url=base_url, context_tokens=4096, max_retries=0
    )
    return LLMClient(settings, cache=ResponseCache.in_data_dir(data), ledger=CallLedger.in_data_dir(data))


def test_a_structured_task_through_the_real_server(llama_server: str, tmp_path: Path):
    task = model_tasks.keywords_task(tmp_path)
    client = _client(llama_server, tmp_path / "data")

    answer = client.run(task, sentence="Citation graphs link papers that cite each other.")

    assert answer.keywords and all(isinstance(word, str) and word for word in answer.keywords)
    [row] = client.rows
    assert (row.provider, row.model, row.status) == ("openai-compatible", SERVED_NAME, "ok")
    # The server reported its own token counts: nothing was estimated on our side.
    assert row.input_tokens > 20 and row.output_tokens > 0 and not row.tokens_estimated
    assert client.writer_label(task) == f"openai-compatible/{SERVED_NAME}"
    assert len(ResponseCache.in_data_dir(tmp_path / "data")) == 1


def test_a_prose_task_through_the_real_server(llama_server: str, tmp_path: Path):
    task = model_tasks.prose_task(tmp_path)
    client = _client(llama_server, tmp_path / "data")

    batch = client.run_many(task, [{"topic": "research papers"}])

    [item] = batch.items
    assert item.ok and len(item.value.text.split()) >= 5
    assert not item.value.text.lstrip().startswith("{")  # prose, not a JSON reply
    [row] = client.rows
    assert row.status == "ok" and 0 < row.output_tokens <= 60
