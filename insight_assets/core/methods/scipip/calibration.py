"""SciPIP's similarity thresholds, calibrated to the embedder in use.

The paper's tau = 0.8 merges summaries that say the same thing *on jina-embeddings-v3*; another
embedder spreads cosines differently (on all-MiniLM-L6-v2 no two summaries of a 22-paper
collection reached 0.8). So each threshold is derived from the embedder itself: the bundled
``data/calibration.json`` holds pairs that say one thing two ways ("same") and pairs that are
related but distinct ("different"), for keywords and for one-sentence summaries, across several
fields. A threshold is the cosine that best separates the two kinds (at the best accuracy, the cut
in the widest gap between neighbouring cosines), so "same meaning" keeps its meaning whatever the embedder.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources

from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.startup.lazy import np


@dataclass(frozen=True)
class Calibration:
    """A calibrated threshold with what it was derived from."""

    threshold: float
    accuracy: float  # share of calibration pairs on the right side of the threshold
    same_median: float
    different_median: float
    pairs: int

    def describe(self, what: str) -> str:
        return (
            f"{what} {self.threshold:.3f}: separates {self.pairs} calibration pairs with accuracy "
            f"{self.accuracy:.0%} (same meaning: median cosine {self.same_median:.3f}; related but "
            f"different: {self.different_median:.3f})"
        )


def separating_threshold(same: Sequence[float], different: Sequence[float]) -> Calibration:
    """The cosine that puts the most ``same`` pairs at or above it and ``different`` pairs below;
    among equally accurate cut points, the one in the widest gap between neighbouring cosines."""
    values = sorted({*same, *different})
    # Each cut point lies midway between two neighbouring cosines; its gap is their distance.
    cuts = [(values[0] - 1e-6, 0.0), (values[-1] + 1e-6, 0.0)] + [
        ((a + b) / 2, b - a) for a, b in itertools.pairwise(values)
    ]
    same_array, different_array = np.asarray(same), np.asarray(different)

    def accuracy(cut: float) -> float:
        right = (same_array >= cut).sum() + (different_array < cut).sum()
        return float(right) / (len(same) + len(different))

    best = max(accuracy(cut) for cut, _ in cuts)
    # Among equally accurate cuts, the one in the widest gap is the least arbitrary.
    threshold = max((gap, cut) for cut, gap in cuts if accuracy(cut) == best)[1]
    return Calibration(
        round(float(threshold), 3),
        best,
        float(np.median(same_array)),
        float(np.median(different_array)),
        len(same) + len(different),
    )


def calibration_pairs() -> dict:
    text = resources.files(__package__).joinpath("data/calibration.json").read_text(encoding="utf-8")
    return json.loads(text)


def _cosines(embed: Callable[[list[str]], np.ndarray], pairs: Sequence[Sequence[str]]) -> list[float]:
    vectors = normalize_rows(embed([text for pair in pairs for text in pair]))
    return [float(vectors[2 * n] @ vectors[2 * n + 1]) for n in range(len(pairs))]


def calibrate(embed: Callable[[list[str]], np.ndarray], kind: str) -> Calibration:
    """The threshold for ``kind`` ("keywords" or "summaries") on the embedder ``embed``."""
    pairs = calibration_pairs()[kind]
    return separating_threshold(_cosines(embed, pairs["same"]), _cosines(embed, pairs["different"]))
