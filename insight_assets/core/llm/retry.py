"""Our retry policy: the SDKs' own retries are switched off so that this one is in force.

Transient failures (``TransientProviderError``: 408, 409, 429, 5xx, timeouts, lost connections) are
retried with exponential backoff and "equal jitter" (half the step fixed, half random), never less
than the server's Retry-After. Retrying stops after ``max_retries`` retries, or earlier when the
next wait would carry the call past ``max_total_s`` from its first attempt. ``sleep`` and ``clock``
are injectable so tests can check the waits without waiting.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from .errors import RetriesExhaustedError, TransientProviderError

T = TypeVar("T")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    max_total_s: float = 120.0
    initial_backoff_s: float = 1.0
    max_backoff_s: float = 30.0

    def backoff_s(self, retry_number: int, rng: random.Random) -> float:
        """The wait before retry ``retry_number`` (1 for the first retry)."""
        step = min(self.max_backoff_s, self.initial_backoff_s * 2 ** (retry_number - 1))
        return step / 2 + rng.uniform(0, step / 2)


@dataclass
class RetryStats:
    attempts: int = 0
    waits_s: list[float] = field(default_factory=list)


class Retrier:
    """Calls a function until it succeeds, fails for good, or the policy gives up."""

    def __init__(
        self,
        policy: RetryPolicy,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        logger: logging.Logger | logging.LoggerAdapter | None = None,
    ):
        self.policy = policy
        self.sleep = sleep
        self.clock = clock
        self.rng = rng or random.Random()
        self.log = logger or log

    def call(self, attempt: Callable[[], T], *, label: str, stats: RetryStats) -> T:
        """Run ``attempt``; ``stats`` is filled in as it goes, so a caller sees the attempt count
        even when this raises. Non-transient errors propagate at once."""
        started = self.clock()
        while True:
            stats.attempts += 1
            try:
                return attempt()
            except TransientProviderError as error:
                failure = error
            wait = self._next_wait(failure, stats, started)
            self.log.warning(
                "%s: %s; retrying in %.1f s (attempt %d of at most %d)",
                label,
                failure,
                wait,
                stats.attempts + 1,
                self.policy.max_retries + 1,
            )
            stats.waits_s.append(wait)
            self.sleep(wait)

    def _next_wait(self, failure: TransientProviderError, stats: RetryStats, started: float) -> float:
        """The wait before the next attempt; raises ``RetriesExhaustedError`` when there is none."""
        retries_done = stats.attempts - 1
        elapsed = self.clock() - started
        if retries_done >= self.policy.max_retries:
            reason = f"gave up after {stats.attempts} attempts"
        else:
            wait = self.policy.backoff_s(retries_done + 1, self.rng)
            if failure.retry_after_s is not None:
                wait = max(wait, failure.retry_after_s)
            if elapsed + wait <= self.policy.max_total_s:
                return wait
            reason = (
                f"gave up after {stats.attempts} attempts: the next wait ({wait:.1f} s) would pass "
                f"the retry time limit of {self.policy.max_total_s:.0f} s"
            )
        raise RetriesExhaustedError(
            f"{reason}; last error: {failure}",
            provider=failure.provider,
            status=failure.status,
            retry_after_s=failure.retry_after_s,
            attempts=stats.attempts,
        )
