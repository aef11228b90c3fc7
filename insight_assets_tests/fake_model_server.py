"""A scripted stand-in for the OpenAI, Anthropic and Gemini HTTP APIs, on 127.0.0.1 only.

Tests queue ``Reply`` and ``Failure`` items; each request takes the next one (or ``default``) and
gets it in the shape of the API it called, so the real SDKs parse it. Every request is recorded,
with its headers, and the server counts how many were being answered at once.

Embedding requests (OpenAI ``/embeddings``, Gemini ``:batchEmbedContents``) are answered with
vectors derived from each input text (see ``fake_vector``) unless a ``Failure`` is queued, or a
``poison_embeddings`` marker occurs in one of their texts: such a request fails every time.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """A reply; ``truncated`` answers as the API does when the reply hit max_tokens."""

    text: str
    input_tokens: int = 20
    output_tokens: int = 10
    delay_s: float = 0.0
    truncated: bool = False
    # OpenAI only: the first token's alternatives and their probabilities, returned as
    # ``logprobs`` when the request asks for them.
    top_probabilities: dict[str, float] | None = None


@dataclass(frozen=True)
class Failure:
    status: int
    message: str = "scripted failure"
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass(frozen=True)
class Received:
    api: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    # When the server read the request (time.monotonic), for tests of when calls went out.
    received_at: float = field(default_factory=time.monotonic)

    def last_user_text(self) -> str:
        if self.api == "gemini":
            return self.body["contents"][-1]["parts"][0]["text"]
        return self.body["messages"][-1]["content"]


EMBEDDING_DIMENSION = 8


def fake_vector(text: str) -> list[float]:
    """A deterministic, deliberately unnormalised vector for ``text``."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [float(byte) + 1.0 for byte in digest[:EMBEDDING_DIMENSION]]


def _embedding_body(api: str, body: dict[str, Any]) -> dict[str, Any]:
    texts = _embedding_texts(api, body)
    if api == "openai-embeddings":
        # Out of order on purpose: clients must place vectors by "index".
        data = [{"object": "embedding", "index": i, "embedding": fake_vector(t)} for i, t in enumerate(texts)]
        return {
            "object": "list",
            "data": data[::-1],
            "model": body.get("model"),
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        }
    return {"embeddings": [{"values": fake_vector(text)} for text in texts]}


def _embedding_texts(api: str, body: dict[str, Any]) -> list[str]:
    if api == "openai-embeddings":
        return body["input"] if isinstance(body["input"], list) else [body["input"]]
    return [request["content"]["parts"][0]["text"] for request in body["requests"]]


def _api_of(path: str) -> str | None:
    path = path.split("?", 1)[0]
    if path.endswith("/embeddings"):
        return "openai-embeddings"
    if path.endswith(":batchEmbedContents"):
        return "gemini-embeddings"
    if path.endswith("/chat/completions"):
        return "openai"
    if path.endswith("/v1/messages"):
        return "anthropic"
    if path.endswith(":generateContent"):
        return "gemini"
    return None


def _logprobs(reply: Reply) -> dict[str, Any]:
    alternatives = [
        {"token": token, "logprob": math.log(p), "bytes": None}
        for token, p in (reply.top_probabilities or {}).items()
    ]
    first = alternatives[0] if alternatives else {"token": reply.text[:1], "logprob": 0.0, "bytes": None}
    return {"content": [{**first, "top_logprobs": alternatives}]}


def _success_body(api: str, reply: Reply, model: str, body: dict[str, Any]) -> dict[str, Any]:
    if api == "openai":
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "finish_reason": "length" if reply.truncated else "stop",
                    "logprobs": _logprobs(reply) if body.get("logprobs") else None,
                }
            ],
            "usage": {
                "prompt_tokens": reply.input_tokens,
                "completion_tokens": reply.output_tokens,
                "total_tokens": reply.input_tokens + reply.output_tokens,
            },
        }
    if api == "anthropic":
        return {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": reply.text}],
            "stop_reason": "max_tokens" if reply.truncated else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
        }
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": reply.text}]},
                "finishReason": "MAX_TOKENS" if reply.truncated else "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": reply.input_tokens,
            "candidatesTokenCount": reply.output_tokens,
            "totalTokenCount": reply.input_tokens + reply.output_tokens,
        },
        "modelVersion": model,
    }


def _failure_body(api: str, failure: Failure) -> dict[str, Any]:
    if api == "anthropic":
        return {"type": "error", "error": {"type": "api_error", "message": failure.message}}
    if api.startswith("gemini"):
        return {"error": {"code": failure.status, "message": failure.message, "status": "ERROR"}}
    return {"error": {"message": failure.message, "type": "fake_error", "code": None}}


class FakeModelServer:
    """``port`` 0: any free one; a fixed port keeps the URL, and so an openai-compatible model's
    cache keys, the same from one server to the next (a benchmark's rebuilds)."""

    def __init__(self, port: int = 0) -> None:
        self.script: deque[Reply | Failure] = deque()
        self.default: Reply | Failure = Failure(500, "the test script ran out of responses")
        # When set, answers every request the script does not: a "model" computed from the request.
        self.responder: Callable[[Received], Reply | Failure] | None = None
        self.requests: list[Received] = []
        # Embedding requests with a text containing one of these markers get the failure, always.
        self.poisoned: dict[str, Failure] = {}
        self.max_in_flight = 0
        self._in_flight = 0
        # Seconds with at least one request in flight, and the integral of requests in flight.
        self.busy_s = 0.0
        self.flight_s = 0.0
        self._since = time.monotonic()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        self._httpd.daemon_threads = True
        # A short poll interval makes stop() quick; the default half second adds up over tests.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def in_flight(self) -> int:
        """Requests being answered now (the one asking included)."""
        with self._lock:
            return self._in_flight

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def poison_embeddings(self, marker: str, failure: Failure) -> None:
        """Fail every embedding request one of whose texts contains ``marker`` (a persistent error
        for some inputs, which no retry outlasts)."""
        with self._lock:
            self.poisoned[marker] = failure

    def queue(self, *items: Reply | Failure) -> None:
        with self._lock:
            self.script.extend(items)

    def start(self) -> FakeModelServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers that are still "thinking"
        self._httpd.shutdown()
        self._httpd.server_close()

    def _enter(self, request: Received) -> None:
        with self._lock:
            self._tick()
            self.requests.append(request)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._tick()
            self._in_flight -= 1

    def _tick(self) -> None:
        """Add the time since the last change to the in-flight integrals (under the lock)."""
        now = time.monotonic()
        if self._in_flight:
            self.busy_s += now - self._since
            self.flight_s += (now - self._since) * self._in_flight
        self._since = now

    @property
    def effective_concurrency(self) -> float:
        """Requests in flight on average over the time at least one was."""
        with self._lock:
            self._tick()
            return self.flight_s / self.busy_s if self.busy_s else 0.0

    def _next(self, request: Received) -> Reply | Failure:
        with self._lock:
            if request.api.endswith("-embeddings"):
                texts = _embedding_texts(request.api, request.body)
                for marker, failure in self.poisoned.items():
                    if any(marker in text for text in texts):
                        return failure
            if self.script:
                return self.script.popleft()
        return self.responder(request) if self.responder is not None else self.default

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                if len(raw) < length:
                    return  # the client went away mid-request (a killed build): nothing was asked
                api = _api_of(self.path)
                if api is None:
                    self._send(404, {"error": {"message": f"no such path {self.path}"}}, {})
                    return
                body = json.loads(raw or b"{}")
                received = Received(api, self.path, dict(self.headers), body)
                server._enter(received)
                try:
                    item = server._next(received)
                    if item.delay_s:
                        server._stopping.wait(item.delay_s)
                finally:
                    # Answered: no longer in flight, before the client can read it and ask again.
                    server._leave()
                model = body.get("model") or self.path.rsplit("/", 1)[-1].split(":")[0]
                if isinstance(item, Reply) and api.endswith("-embeddings"):
                    self._send(200, _embedding_body(api, body), {})
                elif isinstance(item, Reply):
                    self._send(200, _success_body(api, item, model, body), {})
                else:
                    self._send(item.status, _failure_body(api, item), item.headers)

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (a timeout test); nobody is listening

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler
