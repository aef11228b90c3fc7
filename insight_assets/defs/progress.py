"""What a long step says while it works: its progress (papers parsed, model calls done of planned,
training epochs) as log messages that start with ``progress:`` (``StepProgress``), at most one every
few seconds. They are part of the run's log in the UI too; the command line's live view of a build
(``app/progress.py``) reads them from the instance's event log.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

PROGRESS_PREFIX = "progress: "
# A step's progress messages, at most one this often (and its last one always).
REPORT_EVERY_S = 2.0


# Units done before the pace is trusted: the first ones carry the warm-up (a model's load, say).
ETA_AFTER = 3


def eta_text(done: int, total: int, elapsed_s: float) -> str:
    """``"about 3 min left"`` from the pace so far ("" until ``ETA_AFTER`` units are done)."""
    if done < ETA_AFTER or total <= done:
        return ""
    left = elapsed_s / done * (total - done)
    if left < 1:
        return ""
    return f"about {left / 60:.0f} min left" if left >= 90 else f"about {left:.0f} s left"


class StepProgress:
    """What a step says about its own progress: ``report("12 of 40 papers parsed")`` writes a log
    message ``progress: ...`` unless one was written less than ``REPORT_EVERY_S`` ago (``final``
    messages always are). Safe to call from several threads."""

    def __init__(self, log: Callable[[str], None], *, clock: Callable[[], float] = time.monotonic):
        self._log = log
        self._clock = clock
        self._last = float("-inf")
        self._started = clock()
        self._lock = threading.Lock()

    @classmethod
    def of(cls, context) -> StepProgress:
        """The progress of a Dagster step: its messages go to the step's log."""
        return cls(context.log.info)

    def report(self, text: str, *, final: bool = False) -> None:
        with self._lock:
            now = self._clock()
            if not final and now - self._last < REPORT_EVERY_S:
                return
            self._last = now
        self._log(PROGRESS_PREFIX + text)

    def count(self, done: int, total: int, what: str, detail: str = "") -> None:
        """``"done of total what, detail"``, with the time left at the pace so far."""
        eta = eta_text(done, total, self._clock() - self._started)
        parts = [f"{done} of {total} {what}", detail, eta]
        self.report(", ".join(part for part in parts if part), final=done >= total)

    def calls(self, calls) -> None:
        """A model client's ``CallProgress``: calls answered of those planned, tokens and cost."""
        self.count(calls.done, calls.planned, "model calls", calls.spent())
