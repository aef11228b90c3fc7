"""A collection's stored chunks and vectors of one chunk profile, read back for retrieval and
selection: what every method reads of the index.

Only vectors of the current embedder variant are used; chunks without one (a variant change not
yet re-embedded, a failed hosted embedding batch) are left out.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from insight_assets.core.embedding.vectors import nearest_rows
from insight_assets.core.startup.lazy import np, pc

if TYPE_CHECKING:
    from insight_assets.core.storage.stores import VectorStore, Warehouse


class IndexMissing(RuntimeError):
    """The collection has not been built far enough; the message says what to build (callers name
    the collection)."""


@dataclass(frozen=True)
class ChunkRecord:
    """A chunk as methods read it: ``index`` is its position in its document, ``tokens`` its size,
    ``page_start``-``page_end`` the pages it spans (0 when not known)."""

    chunk_id: str
    doc_id: str
    index: int
    text: str
    tokens: int
    page_start: int = 0
    page_end: int = 0


@dataclass(frozen=True)
class CollectionIndex:
    profile: str
    chunks: list[ChunkRecord]  # collection order: documents by file, chunks by position
    vectors: np.ndarray  # one unit row per chunk, same order
    source_labels: dict[str, str]  # chunk id -> "Title, pp. a-b"
    titles: dict[str, str]  # doc id -> title
    # doc id -> a library paper's citekey ("@key") or DOI ("doi:..."), for the papers that have one
    cites: dict[str, str] = field(default_factory=dict)

    def nearest(self, query_vector: np.ndarray, k: int) -> list[ChunkRecord]:
        """The ``k`` chunks nearest ``query_vector`` by cosine (see ``vectors.nearest_rows``)."""
        return [self.chunks[row] for row in nearest_rows(self.vectors, query_vector, k)]

    def nearest_documents(
        self, query_vector: np.ndarray, k: int, among: Collection[str] | None = None
    ) -> list[str]:
        """The ids of the ``k`` documents (of ``among``, default all) whose mean chunk vector is
        nearest ``query_vector`` by cosine, nearest first: no document is embedded again."""
        doc_ids = sorted(
            {chunk.doc_id for chunk in self.chunks} & set(among if among is not None else self.titles)
        )
        rows: dict[str, list[int]] = {doc_id: [] for doc_id in doc_ids}
        for row, chunk in enumerate(self.chunks):
            if chunk.doc_id in rows:
                rows[chunk.doc_id].append(row)
        centres = np.stack([self.vectors[rows[doc_id]].mean(axis=0) for doc_id in doc_ids]) if doc_ids else []
        return [doc_ids[row] for row in nearest_rows(np.asarray(centres), query_vector, k)]


def short_title(title: str, words: int = 6) -> str:
    head = re.split(r"[:\n]", title, maxsplit=1)[0].strip() or title.strip()
    parts = head.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


def load_index(
    warehouse: Warehouse, vectors: VectorStore, collection: str, variant: str, profile: str
) -> CollectionIndex:
    """The collection's ``profile`` chunks that have a vector of the embedder ``variant``."""
    rows = warehouse.rows(
        """SELECT c.chunk_id, c.doc_id, c.chunk_index, c.text, c.token_count, c.page_start, c.page_end,
                  coalesce(nullif(d.title, ''), d.file) AS title, coalesce('@' || p.citekey, 'doi:' || p.doi, '') AS cite
           FROM chunks c JOIN parsed_documents d USING (collection, doc_id)
           LEFT JOIN papers p ON p.collection = c.collection AND p.doc_id = c.doc_id
           WHERE c.collection = ? AND c.profile = ? ORDER BY d.file, c.chunk_index""",
        [collection, profile],
    )
    if not rows:
        raise IndexMissing(
            f"no {profile} chunks (`chunks` holds none of that profile: build it with the {profile} profile)"
        )
    found = read_vectors(vectors, collection, profile, variant)
    return index_from_rows(rows, found, profile, variant, "chunk_embeddings")


def index_from_rows(
    rows: list[dict], found: dict[str, np.ndarray], profile: str, variant: str, built_by: str
) -> CollectionIndex:
    """An index of searchable units: ``rows`` (chunk_id, doc_id, chunk_index, text, token_count,
    page_start, page_end, title), in collection order, that have a vector in ``found``. Any unit a
    method searches (a chunk, a triple, a sentence) is read through this."""
    kept = [row for row in rows if row["chunk_id"] in found]
    if not kept:
        raise IndexMissing(
            f"no {profile} vectors of the embedder {variant!r}; materialize `{built_by}` with this embedder first"
        )
    chunks = [
        ChunkRecord(
            row["chunk_id"],
            row["doc_id"],
            row["chunk_index"],
            row["text"],
            row["token_count"],
            row["page_start"],
            row["page_end"],
        )
        for row in kept
    ]
    labels = {}
    for row in kept:
        pages = (
            f"p. {row['page_start']}"
            if row["page_start"] == row["page_end"]
            else f"pp. {row['page_start']}-{row['page_end']}"
        )
        cite = f"{row['cite']}, " if row.get("cite") else ""  # a library paper's citekey or DOI
        labels[row["chunk_id"]] = f"{short_title(row['title'])}, {cite}{pages}"
    return CollectionIndex(
        profile=profile,
        chunks=chunks,
        vectors=np.stack([found[chunk.chunk_id] for chunk in chunks]),
        source_labels=labels,
        titles={row["doc_id"]: row["title"] for row in kept},
        cites={row["doc_id"]: row["cite"] for row in kept if row.get("cite")},
    )


def read_vectors(vectors: VectorStore, collection: str, profile: str, variant: str) -> dict[str, np.ndarray]:
    """The stored vectors of ``profile`` made by the embedder ``variant``, by unit (chunk) id."""
    table = vectors.read(collection, ["profile", "chunk_id", "variant", "vector"])
    if table is None:
        return {}
    # Filtered and converted in Arrow: a Python list per vector would cost seconds at 20,000 chunks.
    mine = table.filter(pc.and_(pc.equal(table["profile"], profile), pc.equal(table["variant"], variant)))
    if not mine.num_rows:
        return {}
    matrix = np.stack(mine["vector"].to_numpy(zero_copy_only=False)).astype(np.float32)
    return dict(zip(mine["chunk_id"].to_pylist(), matrix, strict=True))
