"""What a method stage works on: one collection's stores, its embedder and its model client.

A stage (``core/methods/<method>/stages.py``) is the model-calling work of one asset, written once:
the asset runs it on a client that calls the configured model and then writes what it returned;
the dry run (``insight-assets estimate``) runs the same stage on an estimate-only client and writes
nothing. A stage reads what its upstream stages made through ``upstream`` (the warehouse in a
build; in a dry run, what the upstream stage planned, since nothing was written) and hands what
its downstream stages read to ``plan`` (a no-op in a build, where the asset writes it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from insight_assets.core.embedding import Embedder
from insight_assets.core.llm import LLMClient
from insight_assets.core.retrieval import Retriever
from insight_assets.core.stores import VectorStore, Warehouse

T = TypeVar("T")


class NothingToDo(Exception):
    """A stage whose inputs are not there; the message says what is missing. The asset fails with
    it rather than reporting an empty success; the dry run prices nothing for that stage."""


@dataclass
class CollectionScope:
    """One collection as a stage sees it. ``planned`` is ``None`` in a build; in a dry run it holds
    what the stages before produced, by the name of the table they would have written."""

    warehouse: Warehouse
    vectors: VectorStore
    vectors_uri: str
    embedder: Embedder | None
    client: LLMClient
    collection: str
    folder: Path
    planned: dict[str, Any] | None = None

    @property
    def estimating(self) -> bool:
        """Whether this is a dry run (nothing is written; the client prices its calls)."""
        return self.planned is not None

    @property
    def embed(self) -> Callable:
        return self._embedder().embed

    def upstream(self, table: str, load: Callable[[], T]) -> T:
        """What an upstream stage made for ``table``: planned earlier in this dry run, else ``load()``
        (read from the warehouse, as the build wrote it)."""
        if self.planned is not None and table in self.planned:
            return self.planned[table]
        return load()

    def plan(self, table: str, value: Any) -> None:
        """Hand the stages downstream what ``table`` would hold (in the shape ``upstream``'s loader
        returns); in a build the asset writes it instead."""
        if self.planned is not None:
            self.planned[table] = value

    def retriever(self, profile: str) -> Retriever:
        """The collection's ``profile`` retriever (``IndexMissing`` before its vectors are built)."""
        return Retriever.open(self.warehouse, self.vectors, self.collection, self._embedder(), profile)

    def _embedder(self) -> Embedder:
        if self.embedder is None:
            raise TypeError("this stage was given no embedder; its asset must take the embedder resource")
        return self.embedder
