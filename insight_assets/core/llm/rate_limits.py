"""What a provider's answer says of its rate limits: ``Retry-After`` (seconds, milliseconds or an
HTTP date) and the allowances left (OpenAI's and the compatible servers' ``x-ratelimit-*``,
Anthropic's ``anthropic-ratelimit-*``), read into a ``RateLimitHint`` that the retries
(``retry.py``) and the limiter of calls in flight (``concurrency.py``) act on."""

from __future__ import annotations

import email.utils
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime


def parse_retry_after(headers: Mapping[str, str] | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` (OpenAI's), or ``retry-after`` as seconds or an HTTP
    date; ``None`` when absent or unreadable."""
    if not headers:
        return None
    lowered = {name.lower(): value for name, value in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


@dataclass(frozen=True)
class RateLimitHint:
    """What a provider's answer said of its rate limits; ``None`` where it did not say."""

    remaining_requests: int | None = None
    remaining_tokens: int | None = None
    # Seconds until the request and token allowances are whole again.
    reset_requests_s: float | None = None
    reset_tokens_s: float | None = None
    retry_after_s: float | None = None

    def pause_s(self) -> float | None:
        """How long no new call should start: the reset of an allowance that is used up."""
        waits = [
            reset
            for remaining, reset in (
                (self.remaining_requests, self.reset_requests_s),
                (self.remaining_tokens, self.reset_tokens_s),
            )
            if remaining is not None and remaining <= 0 and reset is not None
        ]
        return max(waits) if waits else None


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _seconds(value: str | None, now: datetime | None = None) -> float | None:
    """A reset time as seconds from now: OpenAI's durations ("20ms", "1s", "6m0s"), plain seconds,
    or Anthropic's RFC 3339 instants."""
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parts = _DURATION_PART.findall(value)
    if parts and "".join(number + unit for number, unit in parts) == value:
        return sum(float(number) * _UNIT_S[unit] for number, unit in parts)
    try:
        when = datetime.fromisoformat(value)  # Python 3.11 reads a trailing "Z"
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _count(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def parse_rate_limit_headers(headers: Mapping[str, str] | None) -> RateLimitHint | None:
    """The rate-limit headers of an answer (OpenAI's and the compatible servers' ``x-ratelimit-*``,
    Anthropic's ``anthropic-ratelimit-*``, ``Retry-After``); ``None`` when there are none."""
    if not headers:
        return None
    lowered = {name.lower(): value for name, value in headers.items()}

    def first(*names: str) -> str | None:
        return next((lowered[name] for name in names if name in lowered), None)

    hint = RateLimitHint(
        remaining_requests=_count(
            first("x-ratelimit-remaining-requests", "anthropic-ratelimit-requests-remaining")
        ),
        remaining_tokens=_count(
            first(
                "x-ratelimit-remaining-tokens",
                "anthropic-ratelimit-tokens-remaining",
                "anthropic-ratelimit-input-tokens-remaining",
            )
        ),
        reset_requests_s=_seconds(first("x-ratelimit-reset-requests", "anthropic-ratelimit-requests-reset")),
        reset_tokens_s=_seconds(first("x-ratelimit-reset-tokens", "anthropic-ratelimit-tokens-reset")),
        retry_after_s=parse_retry_after(headers),
    )
    return None if hint == RateLimitHint() else hint
