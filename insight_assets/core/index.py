"""A collection's stored InsightGen index, read back for selection: chunks, vectors, theme graph.

Shared by the ``insights`` asset and ``insight-assets ask`` so both select context from exactly
the same data. Only vectors of the current embedder variant are used; chunks without one (a
variant change not yet re-embedded) are left out, and the caller is told how many.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyarrow.compute as pc

from .clustering import ThemeGraph
from .methods.contexts import ChunkRecord
from .selection import ClusterIndex
from .stores import VectorStore, Warehouse

PROFILE = "insightgen"


class IndexMissing(RuntimeError):
    """The collection has not been built far enough; the message says what to build (callers name
    the collection)."""


@dataclass(frozen=True)
class CollectionIndex:
    chunks: list[ChunkRecord]  # collection order: documents by file, chunks by position
    vectors: np.ndarray  # one unit row per chunk, same order
    source_labels: dict[str, str]  # chunk id -> "Title, pp. a-b"
    titles: dict[str, str]  # doc id -> title


def short_title(title: str, words: int = 6) -> str:
    head = re.split(r"[:\n]", title, maxsplit=1)[0].strip() or title.strip()
    parts = head.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


def load_index(warehouse: Warehouse, vectors: VectorStore, collection: str, variant: str) -> CollectionIndex:
    rows = warehouse.rows(
        """SELECT c.chunk_id, c.doc_id, c.chunk_index, c.text, c.token_count, c.page_start, c.page_end,
                  coalesce(nullif(d.title, ''), d.file) AS title
           FROM chunks c JOIN parsed_documents d USING (collection, doc_id)
           WHERE c.collection = ? AND c.profile = ? ORDER BY d.file, c.chunk_index""",
        [collection, PROFILE],
    )
    if not rows:
        raise IndexMissing(
            f"no {PROFILE} chunks (`chunks` holds none of that profile: build it with the {PROFILE} profile)"
        )
    table = vectors.read(collection, ["profile", "chunk_id", "variant", "vector"])
    found: dict[str, np.ndarray] = {}
    if table is not None:
        # Filtered and converted in Arrow: a Python list per vector would cost seconds at 20,000 chunks.
        mine = table.filter(pc.and_(pc.equal(table["profile"], PROFILE), pc.equal(table["variant"], variant)))
        matrix = (
            np.stack(mine["vector"].to_numpy(zero_copy_only=False)).astype(np.float32)
            if mine.num_rows
            else []
        )
        found = dict(zip(mine["chunk_id"].to_pylist(), matrix, strict=True))
    kept = [row for row in rows if row["chunk_id"] in found]
    if not kept:
        raise IndexMissing(
            f"no {PROFILE} vectors of the embedder {variant!r}; materialize `chunk_embeddings` with this "
            "embedder first"
        )
    chunks = [
        ChunkRecord(row["chunk_id"], row["doc_id"], row["chunk_index"], row["text"], row["token_count"])
        for row in kept
    ]
    labels = {}
    for row in kept:
        pages = (
            f"p. {row['page_start']}"
            if row["page_start"] == row["page_end"]
            else f"pp. {row['page_start']}-{row['page_end']}"
        )
        labels[row["chunk_id"]] = f"{short_title(row['title'])}, {pages}"
    return CollectionIndex(
        chunks=chunks,
        vectors=np.stack([found[chunk.chunk_id] for chunk in chunks]),
        source_labels=labels,
        titles={row["doc_id"]: row["title"] for row in kept},
    )


def load_theme_graph(warehouse: Warehouse, collection: str) -> ThemeGraph:
    with warehouse.session() as db:
        tables = [
            db.query(f"SELECT * FROM {name} WHERE collection = ?", [collection])
            for name in ("theme_clusters", "theme_edges", "theme_assignments")
        ]
    if not tables[0].num_rows:
        raise IndexMissing("no theme graph; materialize `theme_graph` first")
    return ThemeGraph.from_tables(*tables)


def load_theme_index(
    warehouse: Warehouse, vectors: VectorStore, collection: str, variant: str
) -> tuple[CollectionIndex, ClusterIndex]:
    """The collection's index and its theme graph prepared for context selection."""
    index = load_index(warehouse, vectors, collection, variant)
    graph = load_theme_graph(warehouse, collection)
    try:
        return index, ClusterIndex(
            graph, {c.chunk_id: c.text for c in index.chunks}, {c.chunk_id: c.tokens for c in index.chunks}
        )
    except KeyError as error:  # chunks changed since the graph was built
        raise IndexMissing(str(error.args[0])) from error
