"""Vectors kept in memory by the text they were computed from: the latest ``size`` texts used, the
least recently used dropped first. One memo may serve several threads (side-by-side work, the MCP
server's searches)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


class VectorMemo:
    def __init__(self, size: int):
        self.size = size
        self._vectors: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def known(self, texts: Sequence[str]) -> dict[str, Any]:
        """The vectors kept for those of ``texts`` that have one, each now the most recently used."""
        with self._lock:
            found = {text: self._vectors[text] for text in texts if text in self._vectors}
            for text in found:
                self._vectors.move_to_end(text)
        return found

    def remember(self, vectors: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        """Keep ``vectors`` (text -> vector), dropping the least recently used beyond ``size``."""
        items = vectors.items() if isinstance(vectors, Mapping) else vectors
        with self._lock:
            for text, vector in items:
                self._vectors[text] = vector
                self._vectors.move_to_end(text)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
