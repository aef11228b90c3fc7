"""What the MCP server keeps loaded for its read tools, so that a search costs a query, not a start-up.

Per collection: its passages' retriever (chunks, vectors, titles), the reranker with the token
vectors kept with its build, and its papers' metadata (``OpenCollection``, ``Papers``). Each is
loaded on first use, or before it by ``warm_up`` in a background thread as the server starts, and
loaded again when a build of the collection lands after it (its assets' build times, read from
the warehouse by each call's check that it is built, have changed). Calls may come from several threads at once: each
collection is opened by one of them while the others wait for it.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass
from typing import Any

from insight_assets.app.mcp.citing import Papers
from insight_assets.app.passages import OpenCollection

# At most this many collections are opened at start-up (the most recently built first): each holds
# its vectors and token vectors in memory (about 70 MB for 20 papers).
WARM_UP_COLLECTIONS = 8


@dataclass(frozen=True)
class Opened:
    stamp: tuple
    search: OpenCollection
    papers: Papers


class OpenedCollections:
    def __init__(self, storage: Any, embedder: Any):
        self.storage = storage
        self.embedder = embedder
        self._opened: dict[str, Opened] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, collection: str, builds: dict[str, dict]) -> Opened:
        """The collection as its last build left it (``builds``: its assets' builds, as the
        warehouse has them now); raises ``IndexMissing`` before its chunks have vectors."""
        stamp = _stamp(builds)
        with self._guard:
            lock = self._locks.setdefault(collection, threading.Lock())
        with lock:
            found = self._opened.get(collection)
            if found is None or found.stamp != stamp:
                found = Opened(
                    stamp,
                    OpenCollection.open(self.storage, self.embedder, collection),
                    Papers.load(self.storage, collection),
                )
                self._opened[collection] = found
        return found

    def papers(self, collection: str, builds: dict[str, dict]) -> Papers:
        """The collection's papers' metadata (without opening its search when it is not open)."""
        found = self._opened.get(collection)
        if found is not None and found.stamp == _stamp(builds):
            return found.papers
        return Papers.load(self.storage, collection)

    def warm_up(self) -> threading.Thread:
        """Load the model and open the most recently built collections in the background, so that
        the first call does not wait for them (the thread returned ends when both are done); a
        collection that cannot be opened is left for its first call to report."""

        def load_model() -> None:
            self.embedder.get_embedder().embed(["warm-up"])

        def open_collections() -> None:
            for collection, builds in self._recently_built():
                try:
                    self.get(collection, builds)
                except Exception as problem:  # noqa: BLE001 - its first call says it to the client
                    print(f"insight-assets mcp: {collection} not opened yet: {problem}", file=sys.stderr)

        def load_both() -> None:
            model = threading.Thread(target=load_model, daemon=True)
            model.start()
            open_collections()
            model.join()

        both = threading.Thread(target=load_both, daemon=True)
        both.start()
        return both

    def _recently_built(self) -> list[tuple[str, dict[str, dict]]]:
        """The most recently built collections with their builds, the latest first."""
        from insight_assets.core.collection_sources import find_sources

        built = []
        for name in find_sources(self.storage.collections_root).collections:
            builds = self.storage.warehouse.builds(name)
            if builds:
                built.append((max(str(b["built_at"]) for b in builds.values()), name, builds))
        return [(name, builds) for _, name, builds in sorted(built, reverse=True)[:WARM_UP_COLLECTIONS]]


def _stamp(builds: dict[str, dict]) -> tuple:
    """What changes when a build of the collection lands: each asset's build time."""
    return tuple(sorted((asset, str(build["built_at"])) for asset, build in builds.items()))
