"""A collection's themes carried from one build to the next.

Clustering a grown collection afresh moves every theme: K-means fitted again over one more paper's
chunks draws other boundaries everywhere, every answer's context is chosen anew, and every insight,
summary and judgement that hangs on a theme is paid for again. So when the last build's graph was
fitted with the same clustering settings and embedder (its ``fit_key``), and at most
``refit_share`` of the chunks changed since that graph's last full fit, its themes are carried over:

- a chunk of the last build keeps its theme;
- a new chunk joins the theme whose centroid (the last build's) is nearest;
- a theme left with no chunk is dropped;
- while the K-means count rule asks for more themes than there are, the most spread of the themes
  that chunks joined or left (the largest sum of its chunks' cosine distances to its centroid) is
  split in two by 2-means, another theme only once none of those can be; the new theme takes the
  next number. The count grows because chunks came: a theme they did not touch stays what it was,
  with its summary and every context drawn from it. The count never shrinks between fits.

A carried theme keeps the centroid it was fitted with, though its members changed. Moved to its
members' new mean, it would reorder every chunk of the theme (a context takes the chunks nearest
the centroid first) and re-rank every neighbour (related themes are ranked by their centroid's
distance to the answer): measured on ten papers plus one, every InsightGen context of the 148
questions changed and none held a chunk of the new paper. Held, a context changes only where a new
chunk is nearer than the chunks it held. The two halves of a split theme get their members' mean.
A theme no chunk joined or left is exactly what it was, and keeps its label (a label's IDF reads
every theme, so one theme's new words could rename another). A collection that changed by more
than ``refit_share`` since the last fit is clustered afresh, as the paper does at every build, and
every centroid is again its members' mean; so is one whose settings or embedder changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from insight_assets.core.startup.lazy import np
from insight_assets.core.themes.cluster_splitting import two_means

if TYPE_CHECKING:
    from pydantic import BaseModel


class EarlierGraph(Protocol):
    """What carrying themes over reads of the last build's graph (a ``clustering.ThemeGraph``)."""

    centroids: np.ndarray
    assignments: np.ndarray
    chunk_ids: tuple[str, ...]
    labels: tuple[str, ...]
    fit_key: str
    fitted: np.ndarray | None
    fit_size: int

    @property
    def k(self) -> int: ...


# The settings that decide which chunks go together; labels and edges are made again at every build.
_FIT_FIELDS = (
    "method",
    "cluster_count",
    "random_state",
    "hdbscan_min_cluster_size",
    "hdbscan_max_points",
    "gmeans_significance",
    "max_clusters",
)


_LABEL_FIELDS = ("label_terms", "label_chunks")


def _digest(settings: BaseModel, names: Sequence[str], extra: str = "") -> str:
    fields = "|".join(f"{name}={getattr(settings, name)!r}" for name in names)
    return hashlib.sha256(f"{fields}|{extra}".encode()).hexdigest()[:12]


def fit_key(settings: BaseModel, embedder: str) -> str:
    """What a graph was made with (``settings``: its ``ThemeGraphSettings``): "<clustering settings
    and embedder>.<label settings>"."""
    return f"{_digest(settings, _FIT_FIELDS, f'embedder={embedder}')}.{_digest(settings, _LABEL_FIELDS)}"


def _same_fit(earlier: str, key: str) -> bool:
    return bool(earlier) and earlier.split(".")[0] == key.split(".")[0]


def same_labelling(earlier: str, key: str) -> bool:
    """Whether labels made under ``earlier`` are what ``key``'s label settings would make."""
    return _same_fit(earlier, key) and earlier.split(".")[-1] == key.split(".")[-1]


@dataclass(frozen=True)
class CarriedThemes:
    """The last build's themes over this build's chunks: a theme per chunk (numbers may have gaps
    where a theme lost every chunk), the centroids kept by theme number (not the split ones), which
    chunks were in the last full fit, how many that fit held, and what was done, in words."""

    assignments: np.ndarray
    centroids: dict[int, np.ndarray]
    fitted: np.ndarray
    fit_size: int
    account: str


@dataclass(frozen=True)
class Refit:
    """Why the chunks are clustered afresh."""

    reason: str


def carry_over(
    previous: EarlierGraph | None,
    chunk_ids: Sequence[str],
    unit: np.ndarray,
    *,
    key: str,
    refit_share: float,
    wanted: int | None,
) -> CarriedThemes | Refit:
    """The last build's themes carried over to ``chunk_ids`` (rows of ``unit``, unit vectors), or why
    not. ``wanted`` is how many themes the count rule asks for (None: the method chooses)."""
    if previous is None or previous.k == 0:
        return Refit("no theme graph of an earlier build")
    if not _same_fit(previous.fit_key, key):
        return Refit("the clustering settings or the embedder changed since the last build")
    if previous.centroids.shape[1] != unit.shape[1]:
        return Refit("the embedding dimension changed since the last build")
    earlier = {chunk: position for position, chunk in enumerate(previous.chunk_ids)}
    positions = np.array([earlier.get(chunk, -1) for chunk in chunk_ids], dtype=np.int64)
    kept = positions >= 0
    fitted = np.zeros(len(chunk_ids), dtype=bool)
    fitted[kept] = previous.fitted[positions[kept]]
    fit_size = previous.fit_size
    changed = int((~fitted).sum()) + (fit_size - int(fitted.sum()))
    share = changed / max(len(chunk_ids), fit_size)
    if share > refit_share:
        return Refit(
            f"{changed} chunks changed since the themes were last fitted, {share:.0%} of the "
            f"collection (more than refit_share {refit_share:.0%})"
        )
    assignments = np.empty(len(chunk_ids), dtype=np.int64)
    assignments[kept] = previous.assignments[positions[kept]]
    added = ~kept
    if added.any():
        assignments[added] = np.argmax(unit[added] @ previous.centroids.T, axis=1)
    gone = np.ones(len(previous.chunk_ids), dtype=bool)
    gone[positions[kept]] = False
    touched = set(previous.assignments[gone].tolist()) | set(assignments[added].tolist())
    assignments, split = _split_to(unit, assignments, wanted, touched)
    removed = len(previous.chunk_ids) - int(kept.sum())
    account = f"themes of the last build carried over: {int(added.sum())} chunks joined, {removed} left"
    if split:
        account += f", {len(split)} themes split to reach the count rule's"
    centroids = {theme: previous.centroids[theme] for theme in range(previous.k) if theme not in split}
    return CarriedThemes(assignments, centroids, fitted, fit_size, account)


def _split_to(
    unit: np.ndarray, assignments: np.ndarray, wanted: int | None, touched: set[int]
) -> tuple[np.ndarray, set[int]]:
    """Split the most spread of the ``touched`` themes (those chunks joined or left; the halves of a
    split one are touched too) in two until there are ``wanted`` themes; once none of them can be
    split, the most spread of all. The assignments and the themes that were split."""
    assignments = assignments.copy()
    touched = set(touched)
    splits: set[int] = set()
    while wanted is not None and len(np.unique(assignments)) < wanted:
        by_spread = [int(theme) for theme in np.argsort(-_spread(unit, assignments), kind="stable")]
        candidates = sorted(by_spread, key=lambda theme: theme not in touched)  # stable: touched first
        for theme in candidates:
            members = np.flatnonzero(assignments == theme)
            halves = two_means(unit[members]) if len(members) >= 2 else None
            if halves is not None:
                half = int(assignments.max()) + 1
                assignments[members[halves[1] == 1]] = half
                splits.add(theme)
                touched |= {theme, half}
                break
        else:
            break  # no theme can be split (every one is a single point or identical points)
    return assignments, splits


def _spread(unit: np.ndarray, assignments: np.ndarray) -> np.ndarray:
    """Per theme number, the sum of its chunks' cosine distances to its (normalised mean) centroid."""
    count = int(assignments.max()) + 1
    sums = np.zeros((count, unit.shape[1]), dtype=np.float64)
    np.add.at(sums, assignments, unit)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    centroids = np.divide(sums, norms, out=np.zeros_like(sums), where=norms > 0)
    distances = 1.0 - np.einsum("ij,ij->i", unit, centroids[assignments])
    return np.bincount(assignments, weights=distances, minlength=count)


def kept_labels(
    previous: EarlierGraph, chunk_ids: Sequence[str], assignments: np.ndarray, labels: Sequence[str]
) -> tuple[str, ...]:
    """``labels`` with each theme whose chunks are exactly those of a theme of ``previous`` given
    that theme's label."""
    earlier = {
        chunks: previous.labels[theme]
        for theme, chunks in _members(previous.chunk_ids, previous.assignments).items()
    }
    now = _members(chunk_ids, assignments)
    return tuple(earlier.get(now.get(theme, frozenset()), label) for theme, label in enumerate(labels))


def _members(chunk_ids: Sequence[str], assignments: np.ndarray) -> dict[int, frozenset[str]]:
    """Each theme's chunks."""
    grouped: dict[int, set[str]] = {}
    for chunk, theme in zip(chunk_ids, assignments, strict=True):
        grouped.setdefault(int(theme), set()).add(chunk)
    return {theme: frozenset(chunks) for theme, chunks in grouped.items()}
