"""One ask of a request at a time in a process: work that runs side by side (the baselines of a
method, the methods of the page) may want the same answer at the same moment, and only the first
asks the provider; the others wait for it and read its answer from the cache.

A request is its cache key (model, task, prompt), so only requests whose answers are
interchangeable wait for each other.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator


class SameRequests:
    """The requests being asked now, by cache key."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._asking: dict[str, threading.Event] = {}

    @contextlib.contextmanager
    def turn(self, key: str) -> Iterator[bool]:
        """``True`` inside: this thread asks ``key``'s request, and the others wanting it wait until
        the block ends. ``False``: another thread was asking it, and has finished; look again for
        its answer (it may have failed, and left none)."""
        with self._lock:
            asking = self._asking.get(key)
            if asking is None:
                asking = self._asking[key] = threading.Event()
                mine = True
            else:
                mine = False
        if not mine:
            asking.wait()
            yield False
            return
        try:
            yield True
        finally:
            with self._lock:
                del self._asking[key]
            asking.set()


SAME_REQUESTS = SameRequests()
