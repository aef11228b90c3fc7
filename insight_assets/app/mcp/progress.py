"""How a long tool call keeps its client informed, and stops when the client cancels it.

The call's work runs in a worker thread and reports to a ``CallProgress``: each method starting and
finishing, each model call done of those planned. The server's event loop reads it every second
and sends a progress notification when something changed, or every ``HEARTBEAT_S`` when nothing
did (a local model's call can take longer than a client's patience), and a log message as each
method starts and ends. Progress counts methods: ``1.5`` of ``5`` is the second method half done.

A cancelled call (``notifications/cancelled``) sets ``cancelled``; the worker raises
``CallCancelled`` at its next step (before the next method, after the model call under way), so
nothing more is asked of the model.
"""

from __future__ import annotations

import threading
import time
from typing import Any

HEARTBEAT_S = 5.0
# Within a method, progress is halfway after this many model calls.
_CALLS_TO_HALFWAY = 3


class CallCancelled(BaseException):
    """The client cancelled the call. A ``BaseException``, so that a method's ``except Exception``
    (which turns its failures into an answer) does not swallow it."""


class CallProgress:
    """A running call's progress, written by its worker thread and read by the event loop."""

    def __init__(self, methods: int = 1):
        self.total = float(max(methods, 1))
        self.cancelled = threading.Event()
        self._lock = threading.Lock()
        self._done_methods = 0
        self._value = 0.0
        self._message = "starting"
        self._logs: list[str] = []
        self._changed = True
        self._sent = -1.0  # progress of the last notification
        self._started = time.monotonic()

    # -- the worker's side: the methods' view (``asking.ask_each``'s ``view``) -------------------

    def started(self, method: str) -> None:
        self.check()
        self._update(self._done_methods, f"{method}: started", log=f"{method}: started")

    def progressed(self, method: str, calls: Any) -> None:
        self.check()
        # A method plans its calls as it goes (2 of 2, then 3 of 6): its share of the way rises
        # with the calls done, towards its end, and the message says how many are planned now.
        share = calls.done / (calls.done + _CALLS_TO_HALFWAY)
        self._update(self._done_methods + share, f"{method}: {calls}")

    def finished(self, method: str, outcome: str) -> None:
        with self._lock:
            self._done_methods += 1
        self._update(self._done_methods, f"{method}: {outcome}", log=f"{method}: {outcome}")
        self.check()

    def check(self) -> None:
        """Raise ``CallCancelled`` once the client has cancelled the call."""
        if self.cancelled.is_set():
            raise CallCancelled()

    def _update(self, value: float, message: str, log: str | None = None) -> None:
        with self._lock:
            self._value = max(self._value, value)
            self._message = message
            self._changed = True
            if log:
                self._logs.append(log)

    # -- the event loop's side -----------------------------------------------------------------

    def due(self, since_sent: float) -> tuple[float, str, list[str]] | None:
        """``(progress, message, log lines)`` to send now, or None: something changed, or nothing
        was sent for ``HEARTBEAT_S``. A heartbeat moves progress up a little (it must increase)."""
        with self._lock:
            if not self._changed and since_sent < HEARTBEAT_S:
                return None
            # Each notification's progress is above the last one's, as the protocol asks: a change
            # that did not move it (a method starting), and a heartbeat, move it up a little.
            if self._value <= self._sent:
                self._value = min(self._sent + 0.001, self.total)
            self._sent = self._value
            self._changed = False
            logs, self._logs = self._logs, []
            elapsed = time.monotonic() - self._started
            return self._value, f"{self._message} ({elapsed:.0f} s)", logs
