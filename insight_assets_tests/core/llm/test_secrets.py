"""The API key reaches the provider and nothing else: no file, log line, message or metadata."""

from __future__ import annotations

import logging
import traceback

import pytest

from insight_assets.core.llm import SUMMARIZE_PASSAGES, Budget, LLMError
from insight_assets_tests.fake_model_server import Failure, Reply

from .conftest import NETWORK_PROVIDERS, PASSAGES, SECRET, VALID_ANSWER, Harness

KEY_HEADERS = {"authorization", "x-api-key", "x-goog-api-key"}


def test_the_key_is_sent_but_never_stored_logged_or_raised(
    harness: Harness, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.DEBUG)  # the SDKs' and HTTP clients' debug logs included
    errors: list[BaseException] = []
    texts: list[str] = []
    for provider in NETWORK_PROVIDERS:
        harness.server.queue(
            Reply(VALID_ANSWER),
            Reply("not json"),
            Reply(VALID_ANSWER),
            Failure(500, f"upstream failed for key {SECRET}"),
            Failure(500, f"Bearer {SECRET}"),
            Failure(401, f"Incorrect API key provided: {SECRET}"),
            Reply("still not json"),
            Reply("{}"),
        )
        client = harness.client(provider, max_retries=1, budget=Budget(max_usd=5.0))
        for question in ("First?", "Second?", "Third?", "Fourth?", "Fifth?"):
            try:
                client.run(SUMMARIZE_PASSAGES, question=question, passages=PASSAGES)
            except LLMError as error:
                errors.append(error)
        texts += [repr(client.settings), repr(client.summary()), str(client.summary().as_metadata())]
        texts += [repr(row) for row in client.rows]
        client.close()

    sent = [
        value
        for request in harness.server.requests
        for name, value in request.headers.items()
        if name.lower() in KEY_HEADERS
    ]
    assert sent and all(SECRET in value for value in sent)
    assert len(errors) == 3 * len(NETWORK_PROVIDERS)
    for error in errors:
        texts += [str(error), repr(error), "".join(traceback.format_exception(error))]
    stored = [path for path in harness.data_dir.rglob("*") if path.is_file()]
    assert stored
    for path in stored:
        assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in caplog.text
    for text in texts:
        assert SECRET not in text
