"""What one stretch of work cost: its calls, tokens and wall seconds, for the cost columns of a
method comparison (the papers' "LLM calls per method").

The count follows the work, not the client: ``spending()`` opens a tally in a context variable, a
client adds the ledger row of each call it records to every tally open in the calling context, and
the client's threads (``batches.py``) run each item in a copy of the context that handed it over.
So methods that run side by side on one client (``BatchingClient.side_by_side``) are each charged
their own calls, and a tally inside another counts toward both.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .ledger import LedgerRow

# The tallies open in this context, innermost last.
_TALLIES: ContextVar[tuple[list[LedgerRow], ...]] = ContextVar("insight_assets_spending", default=())


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
def spending() -> Iterator[Spent]:
    """Inside: the calls recorded in this context (and in the client threads it hands items to) are
    counted into the yielded ``Spent`` (filled in on exit)."""
    rows: list[LedgerRow] = []
    token = _TALLIES.set((*_TALLIES.get(), rows))
    started = time.perf_counter()
    spent = Spent()
    try:
        yield spent
    finally:
        _TALLIES.reset(token)
        spent.calls = len(rows)
        spent.input_tokens = sum(row.input_tokens for row in rows)
        spent.output_tokens = sum(row.output_tokens for row in rows)
        spent.seconds = time.perf_counter() - started


def tally(row: LedgerRow) -> None:
    """Count a recorded call toward every tally open in the calling context."""
    for rows in _TALLIES.get():
        rows.append(row)  # one append: atomic, so threads of one tally need no lock
