"""Cosine similarity over caller-supplied embeddings, and greedy near-duplicate removal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.startup.lazy import np

if TYPE_CHECKING:
    from .records import Embed


def embed_unit(embed: Embed, texts: Sequence[str]) -> np.ndarray:
    """``embed(texts)`` as float64 unit rows (float64, so a cosine right at a threshold is not
    moved across it by rounding); checks there is one row per text."""
    if not texts:
        return np.zeros((0, 0))
    vectors = np.asarray(embed(list(texts)), dtype=np.float64)
    if vectors.ndim != 2 or vectors.shape[0] != len(texts):
        raise ValueError(
            f"embed returned an array of shape {vectors.shape} for {len(texts)} texts; "
            "it must return one row per text"
        )
    return normalize_rows(vectors, dtype=None)


def greedy_duplicates(
    vectors: np.ndarray, threshold: float, exempt: Sequence[bool] | None = None
) -> list[int | None]:
    """For each row, ``None`` when it is kept, else the index of the kept row it is most similar
    to. Exempt rows are kept first, whatever their position; the others are then taken in order
    and dropped when their cosine with any kept row is at or above ``threshold``."""
    count = len(vectors)
    exempt = list(exempt) if exempt is not None else [False] * count
    kept: list[int] = [index for index in range(count) if exempt[index]]
    result: list[int | None] = [None] * count
    for index in range(count):
        if exempt[index]:
            continue
        if kept:
            similarities = vectors[kept] @ vectors[index]
            best = int(np.argmax(similarities))
            if similarities[best] >= threshold:
                result[index] = kept[best]
                continue
        kept.append(index)
    return result
