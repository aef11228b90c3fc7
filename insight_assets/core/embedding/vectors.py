"""Vector helpers every stage shares, and exact nearest-neighbour search by cosine: the dense
retrieval every method uses (the ``Retriever``'s ``dense`` mode, a method's nearest-chunks
baseline, ``CollectionIndex.nearest``).

The search is a flat scan: one matrix-vector product over all rows, then the top k found in linear
time. 20,000 chunks of 384 dimensions take a few milliseconds on two cores; past a million, an ANN
index (LanceDB's IVF-PQ) would pay off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from insight_assets.core.startup.lazy import np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, DTypeLike


def normalize_rows(vectors: ArrayLike, dtype: DTypeLike | None = "float32") -> np.ndarray:
    """``vectors`` with each row (each vector along the last axis) scaled to unit length; a row of
    zeros stays zeros. Converted to ``dtype`` first; ``None`` keeps the input's (float64 TF-IDF
    matrices stay float64)."""
    array = np.asarray(vectors, dtype=dtype)
    return array / np.maximum(np.linalg.norm(array, axis=-1, keepdims=True), 1e-12)


def nearest_rows(
    vectors: np.ndarray, query_vector: np.ndarray, k: int, allowed: np.ndarray | None = None
) -> list[int]:
    """The rows of the ``k`` vectors nearest ``query_vector`` by cosine, nearest first (ties: the
    earlier row first): exact search, the same as a flat index. ``allowed``, a boolean mask over
    the rows, restricts the search to the rows it marks."""
    return [row for row, _ in nearest_rows_scored(vectors, query_vector, k, allowed)]


def nearest_rows_scored(
    vectors: np.ndarray, query_vector: np.ndarray, k: int, allowed: np.ndarray | None = None
) -> list[tuple[int, float]]:
    """``nearest_rows`` with each row's cosine similarity."""
    if k <= 0 or not len(vectors):
        return []
    return top_rows(
        normalize_rows(vectors, dtype=None) @ normalize_rows(query_vector, dtype=None), k, allowed
    )


def top_rows(similarity: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
    """``(row, similarity)`` of the ``k`` highest similarities (among the ``allowed`` rows), highest
    first, ties to the earlier row."""
    candidates = np.arange(len(similarity)) if allowed is None else np.flatnonzero(allowed)
    if len(candidates) > k:
        # Every row scoring at least the k-th best: the exact top k with all its ties, found in
        # linear time, then ordered (a full sort of 20,000 rows costs more than the search).
        kth = np.partition(similarity[candidates], len(candidates) - k)[len(candidates) - k]
        candidates = candidates[similarity[candidates] >= kth]
    order = sorted(candidates.tolist(), key=lambda row: (-similarity[row], row))[:k]
    return [(row, float(similarity[row])) for row in order]
