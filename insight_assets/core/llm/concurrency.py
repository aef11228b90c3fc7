"""How many calls are in flight to one provider: a limit per provider endpoint, shared by every
client of a process and, through lock files, by every process of the machine; adaptive on rate limits.

One ``ProviderLimiter`` serves each (provider, base URL) in a process (``shared_limiter``), so the
steps of a run, the batches of a step and the judges of a panel draw from one pool rather than
each from a pool of its own. With ``slot_dir`` a call also holds one of ``limit`` lock files there
(``fcntl.flock``), so two runs, or the processes of a multiprocess run, together stay under the
limit: the kernel frees a dead process's locks, so a killed run holds nothing.

The limit in force adapts as TCP's congestion window does: each rate-limited answer (HTTP 429)
halves it and holds every new call until the server's ``Retry-After``; each success adds
``1/limit`` back, so a full window of successes climbs one call, up to the configured ceiling. The
rate-limit headers of successful answers (``x-ratelimit-remaining-requests`` and ``-tokens``,
Anthropic's ``anthropic-ratelimit-*``) cap it before a 429 comes: no more calls in flight than the
server says remain, and none at all until its reset when nothing remains.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .rate_limits import RateLimitHint

# How often a call waiting for another process's slot looks again.
_SLOT_POLL_S = 0.02


@dataclass(frozen=True)
class ConcurrencyStats:
    """What a limiter saw: ``effective`` is the mean number of calls in flight over the time at least
    one call was in flight or waiting for a slot (the share of the limit the work used)."""

    limit: int
    limit_now: float
    max_in_flight: int
    calls: int
    rate_limited: int
    busy_s: float
    effective: float


class _SlotFiles:
    """``count`` lock files in ``folder``: a holder of one has one of the machine's slots."""

    def __init__(self, folder: Path, count: int):
        self.folder = folder
        self.count = count
        folder.mkdir(parents=True, exist_ok=True)

    def try_take(self) -> int | None:
        """A locked slot file's descriptor, or ``None`` when every slot is held."""
        for number in range(self.count):
            descriptor = os.open(self.folder / f"slot-{number:03d}.lock", os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(descriptor)
                continue
            return descriptor
        return None

    @staticmethod
    def give_back(descriptor: int) -> None:
        os.close(descriptor)  # closing the descriptor releases its lock


class ProviderLimiter:
    """The calls in flight to one provider endpoint; use ``with limiter.slot(): ...`` around each
    request, and tell it what the answer said (``succeeded``, ``rate_limited``)."""

    def __init__(
        self,
        limit: int,
        *,
        slot_dir: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        if limit < 1:
            raise ValueError("a provider's concurrency limit must be at least 1")
        self.limit = limit
        self._clock = clock
        self._slots = _SlotFiles(slot_dir, limit) if slot_dir is not None else None
        self._changed = threading.Condition()
        self._allowed = float(limit)
        self._in_flight = 0
        self._waiting = 0
        self._paused_until = 0.0
        self._max_in_flight = 0
        self._calls = 0
        self._rate_limited = 0
        # The integral of calls in flight over time, and the time anything was in flight or waiting.
        self._flight_s = 0.0
        self._busy_s = 0.0
        self._since = clock()

    def set_limit(self, limit: int) -> None:
        """A new ceiling (the configuration changed); the adapted limit stays below it."""
        with self._changed:
            self.limit = limit
            self._allowed = min(self._allowed, float(limit))
            if self._slots is not None:
                self._slots.count = limit
            self._changed.notify_all()

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        """Wait for a free slot (this process's adapted limit, then the machine's slot files) and
        hold it while the body runs."""
        with self._changed:
            self._tick()
            self._waiting += 1
            try:
                while True:
                    wait = self._paused_until - self._clock()
                    if wait <= 0 and self._in_flight < max(1, int(self._allowed)):
                        break
                    self._changed.wait(timeout=wait if wait > 0 else None)
                    self._tick()
            finally:
                self._waiting -= 1
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
        descriptor = self._take_machine_slot()
        try:
            yield
        finally:
            if descriptor is not None:
                _SlotFiles.give_back(descriptor)
            with self._changed:
                self._tick()
                self._in_flight -= 1
                self._calls += 1
                self._changed.notify_all()

    def _take_machine_slot(self) -> int | None:
        if self._slots is None:
            return None
        while (descriptor := self._slots.try_take()) is None:
            time.sleep(_SLOT_POLL_S)
        return descriptor

    def succeeded(self, hint: RateLimitHint | None = None) -> None:
        """An answer came: climb back towards the ceiling, within what the headers say remains."""
        with self._changed:
            self._allowed = min(float(self.limit), self._allowed + 1.0 / max(1.0, self._allowed))
            if hint is not None:
                if hint.remaining_requests is not None:
                    # The calls now in flight are already counted in what remains.
                    self._allowed = min(self._allowed, max(1.0, float(hint.remaining_requests)))
                self._pause(hint.pause_s())
            self._changed.notify_all()

    def rate_limited(self, hint: RateLimitHint | None = None) -> None:
        """A 429: halve the limit in force and hold new calls until the server's retry time."""
        with self._changed:
            self._rate_limited += 1
            self._allowed = max(1.0, self._allowed / 2)
            if hint is not None:
                self._pause(hint.retry_after_s if hint.retry_after_s is not None else hint.pause_s())
            self._changed.notify_all()

    def _pause(self, seconds: float | None) -> None:
        if seconds:
            self._paused_until = max(self._paused_until, self._clock() + seconds)

    def _tick(self) -> None:
        """Add the time since the last change to the in-flight integrals (under the lock)."""
        now = self._clock()
        elapsed = now - self._since
        self._since = now
        if self._in_flight or self._waiting:
            self._busy_s += elapsed
            self._flight_s += elapsed * self._in_flight

    def stats(self) -> ConcurrencyStats:
        with self._changed:
            self._tick()
            return ConcurrencyStats(
                limit=self.limit,
                limit_now=self._allowed,
                max_in_flight=self._max_in_flight,
                calls=self._calls,
                rate_limited=self._rate_limited,
                busy_s=self._busy_s,
                effective=self._flight_s / self._busy_s if self._busy_s else 0.0,
            )


_shared: dict[tuple[str, str], ProviderLimiter] = {}
_shared_lock = threading.Lock()


def endpoint_key(provider: str, base_url: str | None) -> tuple[str, str]:
    return provider, (base_url or "").rstrip("/")


def shared_limiter(
    provider: str, base_url: str | None, limit: int, *, slot_root: Path | None = None
) -> ProviderLimiter:
    """This process's limiter for the endpoint; with ``slot_root`` its slots are also lock files
    under it, one folder per endpoint, shared with every process that names the same root."""
    key = endpoint_key(provider, base_url)
    with _shared_lock:
        limiter = _shared.get(key)
        if limiter is None:
            slot_dir = None
            if slot_root is not None:
                name = hashlib.sha256("\n".join(key).encode("utf-8")).hexdigest()[:16]
                slot_dir = Path(slot_root) / f"{provider}-{name}"
            limiter = _shared[key] = ProviderLimiter(limit, slot_dir=slot_dir)
        elif limiter.limit != limit:
            limiter.set_limit(limit)
        return limiter
