"""A spending limit for one run, checked before every provider request.

Before a request is sent its cost is estimated pessimistically (the prompt's tokens plus the full
``max_tokens`` of output) and *reserved*; if what was spent, what is in flight and this estimate
together would pass the limit, ``BudgetExceeded`` is raised and nothing is sent. After the call the
reservation is released and the real cost counts.

With a persistent ledger and a run id, "what was spent" is read from the ledger, so assets of the
same run in other processes count too (their in-flight reservations do not: the limit can be passed
by at most the calls running at that moment elsewhere). Without them, the budget counts only the
calls made through it. A USD limit cannot be checked for a model without a price: such calls are
let through with a warning, and ``max_tokens`` is the limit to use for them.
"""

from __future__ import annotations

import itertools
import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import BudgetExceeded

if TYPE_CHECKING:
    from .ledger import CallLedger

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reservation:
    id: int
    usd: float
    tokens: int


class Budget:
    def __init__(
        self,
        max_usd: float | None = None,
        max_tokens: int | None = None,
        *,
        ledger: CallLedger | None = None,
        run_id: str | None = None,
    ):
        if max_usd is not None and max_usd < 0:
            raise ValueError("max_usd must not be negative")
        if max_tokens is not None and max_tokens < 0:
            raise ValueError("max_tokens must not be negative")
        self.max_usd = max_usd
        self.max_tokens = max_tokens
        self._ledger = ledger if ledger is not None and ledger.path is not None and run_id else None
        self._run_id = run_id
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._in_flight: dict[int, Reservation] = {}
        self._settled_usd = 0.0
        self._settled_tokens = 0
        self._warned_unpriced = False

    def spent(self) -> tuple[float, int]:
        """(USD, tokens) spent so far, not counting calls in flight."""
        if self._ledger is not None and self._run_id is not None:
            return self._ledger.run_totals(self._run_id)
        return self._settled_usd, self._settled_tokens

    def reserve(self, *, label: str, estimated_usd: float | None, estimated_tokens: int) -> Reservation:
        with self._lock:
            spent_usd, spent_tokens = self.spent()
            flight_usd = sum(item.usd for item in self._in_flight.values())
            flight_tokens = sum(item.tokens for item in self._in_flight.values())
            if self.max_tokens is not None and (
                spent_tokens + flight_tokens + estimated_tokens > self.max_tokens
            ):
                raise BudgetExceeded(
                    f"token budget of {self.max_tokens} for this run would be exceeded by {label} "
                    f"(spent {spent_tokens}, in flight {flight_tokens}, this call up to "
                    f"{estimated_tokens}); it was not sent. Raise the budget or run fewer items."
                )
            if self.max_usd is not None and estimated_usd is None and not self._warned_unpriced:
                self._warned_unpriced = True
                log.warning(
                    "the USD budget cannot be checked for %s: the model has no price; set a token "
                    "budget to limit it",
                    label,
                )
            if (
                self.max_usd is not None
                and estimated_usd is not None
                and spent_usd + flight_usd + estimated_usd > self.max_usd
            ):
                raise BudgetExceeded(
                    f"budget of {_usd(self.max_usd)} for this run would be exceeded by {label} "
                    f"(spent {_usd(spent_usd)}, in flight {_usd(flight_usd)}, this call up to "
                    f"{_usd(estimated_usd)}); it was not sent. Raise the budget or run fewer items."
                )
            reservation = Reservation(next(self._ids), estimated_usd or 0.0, estimated_tokens)
            self._in_flight[reservation.id] = reservation
            return reservation

    def settle(self, reservation: Reservation, *, usd: float | None, tokens: int) -> None:
        """Release ``reservation`` and count what the call really cost (``None``: unpriced)."""
        with self._lock:
            self._in_flight.pop(reservation.id, None)
            self._settled_usd += usd or 0.0
            self._settled_tokens += tokens


def _usd(amount: float) -> str:
    # Single calls cost fractions of a cent: show them, not "$0.00".
    return f"${amount:.2f}" if amount >= 1 else f"${amount:.6f}"
