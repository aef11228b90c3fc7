"""What one stretch of work cost a client: its calls, tokens and wall seconds, for the cost columns
of a method comparison (the papers' "LLM calls per method")."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass
class Spent:
    """Calls (every request the work needed, cache hits and repairs included: a rerun costs the
    same count), their tokens, and the wall seconds."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0

    def per(self, items: int) -> dict[str, float]:
        """The cost of one of ``items`` (a target, a question): the totals shared evenly."""
        n = max(items, 1)
        return {
            "calls": round(self.calls / n, 2),
            "input_tokens": round(self.input_tokens / n, 1),
            "output_tokens": round(self.output_tokens / n, 1),
            "seconds": round(self.seconds / n, 3),
        }


@contextlib.contextmanager
def spending(client: Any) -> Iterator[Spent]:
    """Inside: the client's calls are counted into the yielded ``Spent`` (filled in on exit). The
    client's other work must not run meanwhile (its rows would be counted too)."""
    before = len(client.rows)
    started = time.perf_counter()
    spent = Spent()
    try:
        yield spent
    finally:
        rows = client.rows[before:]
        spent.calls = len(rows)
        spent.input_tokens = sum(row.input_tokens for row in rows)
        spent.output_tokens = sum(row.output_tokens for row in rows)
        spent.seconds = time.perf_counter() - started
