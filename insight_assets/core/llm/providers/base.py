"""What every model adapter provides, and the one mapping from HTTP failures to our errors.

Adapters catch their SDK's exceptions and build one of ours *outside* the ``except`` block, so
the SDK exception (which holds the request, headers included) is neither the ``__cause__`` nor the
``__context__`` of what we raise and cannot leak a key into a traceback.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..errors import (
    AuthenticationError,
    ProviderError,
    RequestRejectedError,
    TransientProviderError,
    UnknownModelError,
)
from ..rate_limits import RateLimitHint, parse_rate_limit_headers, parse_retry_after

if TYPE_CHECKING:
    from ..redaction import Redactor
    from ..settings import ModelParams

RETRYABLE_STATUSES = frozenset({408, 409, 429})

# Long server messages are cut: they go into exception text and ledger rows.
_MAX_MESSAGE_CHARS = 500


@dataclass(frozen=True)
class Message:
    role: Literal["user", "assistant"]
    content: str


@dataclass(frozen=True)
class Completion:
    """A reply. Token counts are ``None`` when the server did not report them; ``truncated`` is
    true when the reply stopped at ``max_tokens``; ``finish_reason`` is the provider's own word for
    why it stopped ("stop", "end_turn", "length", "MAX_TOKENS"...), when it gave one."""

    text: str
    input_tokens: int | None
    output_tokens: int | None
    truncated: bool = False
    finish_reason: str | None = None
    # What the answer's rate-limit headers said, where the adapter can read them.
    rate_limit: RateLimitHint | None = None


class ChatProvider(Protocol):
    name: str

    def complete(self, messages: Sequence[Message], params: ModelParams) -> Completion:
        """One request, no retries; failures raise subclasses of ``ProviderError``."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class ErrorContext:
    """What an adapter knows when it turns a failure into a message."""

    provider: str
    key_env: str
    redact: Redactor


def server_message(body: Any, fallback: str) -> str:
    """The human part of an error body: ``{"error": {"message": ...}}`` or ``{"message": ...}``."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(inner, str):
            return inner
    if isinstance(body, str) and body.strip():
        return body
    return fallback


def error_for_status(
    status: int,
    message: str,
    headers: Mapping[str, str] | None,
    context: ErrorContext,
    model: str,
) -> ProviderError:
    message = context.redact(message)[:_MAX_MESSAGE_CHARS]
    provider = context.provider
    if status in RETRYABLE_STATUSES or status >= 500:
        return TransientProviderError(
            f"{provider} answered HTTP {status}: {message}",
            provider=provider,
            status=status,
            retry_after_s=parse_retry_after(headers),
            rate_limit=parse_rate_limit_headers(headers),
        )
    if status in (401, 403) or _names_a_bad_key(message):
        return AuthenticationError(
            f"authentication failed for provider {provider} (HTTP {status}): check the API key "
            f"in the environment variable {context.key_env or '(none configured)'}. "
            f"Server said: {message}",
            provider=provider,
            status=status,
        )
    if status == 404:
        return UnknownModelError(
            f"unknown model {model!r} for provider {provider} (HTTP 404): check the model "
            f"name in the LLM settings (or the base_url). Server said: {message}",
            provider=provider,
            status=status,
        )
    return RequestRejectedError(
        f"{provider} rejected the request (HTTP {status}): {message}",
        provider=provider,
        status=status,
    )


def _names_a_bad_key(message: str) -> bool:
    # Gemini answers a wrong key with 400 INVALID_ARGUMENT "API key not valid".
    lowered = message.lower()
    return "api key not valid" in lowered or "api_key_invalid" in lowered


def timeout_error(context: ErrorContext, timeout_s: float) -> TransientProviderError:
    return TransientProviderError(
        f"{context.provider} did not answer within {timeout_s:g} s (timeout_s)",
        provider=context.provider,
    )


def connection_error(context: ErrorContext, detail: str) -> TransientProviderError:
    return TransientProviderError(
        f"could not reach {context.provider}: {context.redact(detail)[:_MAX_MESSAGE_CHARS]}",
        provider=context.provider,
    )


def call_stainless_sdk(
    sdk: Any, request: Callable[[], Any], context: ErrorContext, params: ModelParams
) -> Any:
    """Run one request of the openai or anthropic SDK, mapping its errors to ours.

    Both SDKs are generated from one template, so they raise the same exception family. The error is
    raised outside the ``except`` block so that it carries no chained SDK exception (whose text may
    hold request details).
    """
    failure: ProviderError | None = None
    try:
        return request()
    except sdk.APITimeoutError:
        failure = timeout_error(context, params.timeout_s)
    except sdk.APIConnectionError as error:
        failure = connection_error(context, f"{type(error).__name__}: {error.message}")
    except sdk.APIStatusError as error:
        failure = error_for_status(
            error.status_code,
            server_message(error.body, error.message),
            dict(error.response.headers),
            context,
            params.model,
        )
    raise failure


def httpx_error_classes() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(timeout classes, other transport classes) of whichever of httpx and httpx2 is installed:
    google-genai uses either, depending on the environment."""
    timeouts: list[type[BaseException]] = []
    transports: list[type[BaseException]] = []
    for name in ("httpx", "httpx2"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        timeouts.append(module.TimeoutException)
        transports.append(module.TransportError)
    return tuple(timeouts), tuple(transports)


def choice_reply(probabilities: Mapping[str, float], options: Sequence[str]) -> str:
    """A ``choice_options`` request's reply: the options' probabilities, renormalised over the
    options (the rest of the vocabulary's mass left out), as ``{"probabilities": {...}}``."""
    import json

    found = {option: float(probabilities.get(option, 0.0)) for option in options}
    total = sum(found.values())
    normalised = {option: round(p / total, 6) for option, p in found.items()} if total > 0 else {}
    return json.dumps({"probabilities": normalised})
