"""First-stage retrieval over a collection's stored chunks of one profile: dense, lexical, hybrid.

- ``dense``: cosine between the query's vector (the configured embedder) and every stored chunk
  vector, exact, on the vectors held in memory (a flat index; 20,000 chunks take milliseconds).
- ``lexical``: BM25 over LanceDB's native full-text index on the chunk text (built by
  ``chunk_embeddings``): English stemming, stop words removed, accents folded.
- ``hybrid``: both lists fused by reciprocal-rank fusion (LanceDB's ``RRFReranker``, k = 60): a
  chunk's score is the sum over the lists that hold it of 1 / (60 + its rank there).

Filters restrict the search to some documents or leave some out; they hold for every mode.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from insight_assets.core.embedding.models import one_torch_thread
from insight_assets.core.embedding.vectors import normalize_rows, top_rows
from insight_assets.core.ingestion.chunking import PASSAGE
from insight_assets.core.retrieval.index import CollectionIndex, load_index
from insight_assets.core.startup.lazy import np, pa
from insight_assets.core.storage.stores import VectorStore, Warehouse, sql_text

RETRIEVAL_MODES = ("dense", "lexical", "hybrid")
DEFAULT_PROFILE = PASSAGE
# Cormack et al. (2009): k = 60 is near-optimal and not critical; LanceDB's default too.
RRF_K = 60


class RetrievalError(ValueError):
    """A retrieval request that cannot be served as asked (unknown mode, no such document)."""


@dataclass(frozen=True)
class Hit:
    """A retrieved chunk, where it comes from, and why it is here.

    ``mode`` is the retrieval mode asked for; ``found_by`` the first-stage lists that held the chunk
    (``("dense", "lexical")`` for a hybrid hit both found). ``score`` orders the hits: cosine
    (dense), BM25 (lexical), the RRF sum (hybrid), or the reranker's score once ``reranker`` is set,
    in which case ``retrieval_score`` keeps the first stage's.
    """

    chunk_id: str
    doc_id: str
    title: str
    page_start: int
    page_end: int
    text: str
    score: float
    mode: str
    found_by: tuple[str, ...]
    retrieval_score: float | None = None
    reranker: str | None = None
    cite: str = ""  # the paper's citekey or DOI, from its library entry ('' for neither)

    @property
    def pages(self) -> str:
        if self.page_start == self.page_end:
            return f"p. {self.page_start}"
        return f"pp. {self.page_start}-{self.page_end}"


class Retriever:
    """A collection's ``profile`` chunks, searchable by meaning, by words, or both.

    Open it once and ask many queries: the vectors are read from LanceDB once, the full-text index is
    LanceDB's own, and ``search_many`` embeds all its queries in one batch.
    """

    def __init__(
        self,
        collection: str,
        index: CollectionIndex,
        vectors: VectorStore,
        embed: Callable[[list[str]], np.ndarray],
        variant: str,
    ):
        self.collection = collection
        self.index = index
        self.store = vectors
        self.embed = embed
        self.variant = variant
        self._unit = normalize_rows(index.vectors)
        self._row = {chunk.chunk_id: row for row, chunk in enumerate(index.chunks)}
        self._doc_ids = np.asarray([chunk.doc_id for chunk in index.chunks])

    @classmethod
    def open(
        cls,
        warehouse: Warehouse,
        vectors: VectorStore,
        collection: str,
        embedder,
        profile: str = DEFAULT_PROFILE,
    ) -> Retriever:
        """The retriever over ``collection``'s ``profile`` chunks that have a vector of ``embedder``
        (raises ``IndexMissing`` when there are none)."""
        index = load_index(warehouse, vectors, collection, embedder.variant, profile)
        return cls(collection, index, vectors, embedder.embed, embedder.variant)

    @property
    def documents(self) -> set[str]:
        return set(self.index.titles)

    def search(
        self,
        query: str,
        k: int = 20,
        mode: str = "hybrid",
        *,
        documents: Collection[str] | None = None,
        exclude: Collection[str] = (),
        query_vector: np.ndarray | None = None,
    ) -> list[Hit]:
        """The ``k`` best chunks for ``query``, best first.

        ``documents`` (ids) restricts the search to those documents, ``exclude`` leaves documents
        out. ``query_vector`` spares embedding the query again (``search_many`` passes it).
        """
        if mode not in RETRIEVAL_MODES:
            raise RetrievalError(
                f"unknown retrieval mode {mode!r}; choose one of {', '.join(RETRIEVAL_MODES)}"
            )
        allowed = self._allowed(documents, exclude)
        if k <= 0 or not allowed.any():
            return []
        dense = lexical = None
        if mode in ("dense", "hybrid"):
            if query_vector is None:
                with one_torch_thread():
                    query_vector = self.embed([query])[0]
            dense = top_rows(self._unit @ normalize_rows(query_vector), k, allowed)
        if mode in ("lexical", "hybrid"):
            lexical = self._lexical(query, k, documents, exclude)
        if mode == "dense":
            return [self._hit(row, score, mode, ("dense",)) for row, score in dense]
        if mode == "lexical":
            return [self._hit(row, score, mode, ("lexical",)) for row, score in lexical]
        return self._fuse(query, dense, lexical, k)

    def search_many(
        self, queries: Sequence[str], k: int = 20, mode: str = "hybrid", **filters
    ) -> list[list[Hit]]:
        """``search`` for each query; the queries are embedded in one batch."""
        if mode == "lexical" or not queries:
            return [self.search(query, k, mode, **filters) for query in queries]
        vectors = self.embed(list(queries))
        return [
            self.search(query, k, mode, query_vector=vector, **filters)
            for query, vector in zip(queries, vectors, strict=True)
        ]

    def similarities(self, query_vector: np.ndarray, chunk_ids: Sequence[str]) -> list[float]:
        """The cosine of each chunk (by id) with ``query_vector``: how close a passage found by one
        query is to another query, without searching again."""
        rows = [self._row[chunk_id] for chunk_id in chunk_ids]
        return [float(value) for value in self._unit[rows] @ normalize_rows(query_vector)]

    def _allowed(self, documents: Collection[str] | None, exclude: Collection[str]) -> np.ndarray:
        if documents is not None:
            unknown = sorted(set(documents) - self.documents)
            if unknown and len(unknown) == len(set(documents)):
                raise RetrievalError(
                    f"none of the documents {', '.join(unknown)} has {self.index.profile} chunks in "
                    f"collection {self.collection!r}"
                )
            allowed = np.isin(self._doc_ids, list(documents))
        else:
            allowed = np.ones(len(self._doc_ids), dtype=bool)
        if exclude:
            allowed &= ~np.isin(self._doc_ids, list(exclude))
        return allowed

    def _lexical(
        self, query: str, k: int, documents: Collection[str] | None, exclude: Collection[str]
    ) -> list[tuple[int, float]]:
        conditions = [f"profile = {sql_text(self.index.profile)}", f"variant = {sql_text(self.variant)}"]
        if documents is not None:
            conditions.append(f"doc_id IN ({', '.join(sql_text(doc) for doc in sorted(documents))})")
        if exclude:
            conditions.append(f"doc_id NOT IN ({', '.join(sql_text(doc) for doc in sorted(exclude))})")
        found = self.store.text_search(self.collection, query, " AND ".join(conditions), k)
        # A chunk LanceDB holds but the index left out (no chunk row any more) cannot be cited.
        return [(self._row[chunk_id], score) for chunk_id, score in found if chunk_id in self._row]

    def _fuse(
        self, query: str, dense: list[tuple[int, float]], lexical: list[tuple[int, float]], k: int
    ) -> list[Hit]:
        from lancedb.rerankers import RRFReranker

        def ranked(rows: list[tuple[int, float]], column: str) -> pa.Table:
            return pa.table(
                {
                    "_rowid": pa.array([row for row, _ in rows], pa.uint64()),
                    column: pa.array([score for _, score in rows], pa.float32()),
                }
            )

        fused = RRFReranker(K=RRF_K).rerank_hybrid(
            query, ranked(dense, "_distance"), ranked(lexical, "_score")
        )
        in_dense = {row for row, _ in dense}
        in_lexical = {row for row, _ in lexical}
        hits = []
        for row, score in zip(
            fused["_rowid"].to_pylist()[:k], fused["_relevance_score"].to_pylist()[:k], strict=True
        ):
            found_by = tuple(
                name for name, rows in (("dense", in_dense), ("lexical", in_lexical)) if row in rows
            )
            hits.append(self._hit(row, score, "hybrid", found_by))
        return hits

    def _hit(self, row: int, score: float, mode: str, found_by: tuple[str, ...]) -> Hit:
        chunk = self.index.chunks[row]
        return Hit(
            chunk_id=chunk.chunk_id,
            doc_id=chunk.doc_id,
            title=self.index.titles[chunk.doc_id],
            page_start=chunk.page_start,
            page_end=chunk.page_end,
            text=chunk.text,
            score=float(score),
            mode=mode,
            found_by=found_by,
            cite=self.index.cites.get(chunk.doc_id, ""),
        )


def retrieve(
    warehouse: Warehouse,
    vectors: VectorStore,
    collection: str,
    query: str,
    *,
    embedder,
    profile: str = DEFAULT_PROFILE,
    k: int = 20,
    mode: str = "hybrid",
    documents: Collection[str] | None = None,
    exclude: Collection[str] = (),
) -> list[Hit]:
    """One query against a collection (opens a ``Retriever``; keep one open for many queries)."""
    retriever = Retriever.open(warehouse, vectors, collection, embedder, profile)
    return retriever.search(query, k, mode, documents=documents, exclude=exclude)
