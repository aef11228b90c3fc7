"""X-Means and G-Means (InsightGen Appendix B): clusters split in two for as long as a test says
the split fits the points better (X-Means: the BIC; G-Means: Anderson-Darling's test of normality
along the split's axis). sklearn and scipy are imported when a collection is clustered.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.startup.lazy import np

# A cluster smaller than this is never split by X-Means or G-Means: G-Means tests half the
# points, and the Anderson-Darling approximation needs about 8; a BIC from a handful of points in
# hundreds of dimensions says nothing either.
_MIN_SPLIT_POINTS = 16
# Each round can at most double the clusters, so 20 rounds reach far past any real collection;
# splitting stops much earlier, when no cluster splits.
_MAX_SPLIT_ROUNDS = 20
_TWO_MEANS_ITERATIONS = 50


def split_while(
    unit: np.ndarray,
    cap: int,
    random_state: int,
    should_split: Callable[[np.ndarray, np.ndarray, np.ndarray], bool],
) -> np.ndarray:
    """X-Means / G-Means: start from one cluster; each round, run K-means from the current centres,
    then try to split every cluster in two (2-means from its principal axis, as in G-Means) and keep
    the split where ``should_split(members, child_centres, child_of_each_member)`` says so. Stop
    when no cluster splits, at ``cap`` clusters, or after ``_MAX_SPLIT_ROUNDS`` rounds."""
    centres = unit.mean(axis=0, keepdims=True)
    for round_ in range(_MAX_SPLIT_ROUNDS + 1):
        assignments, centres = _lloyd(unit, centres, random_state)
        if round_ == _MAX_SPLIT_ROUNDS:
            break
        proposal: list[np.ndarray] = []
        for j, centre in enumerate(centres):
            members = unit[assignments == j]
            room = cap - len(proposal) - (len(centres) - j)  # clusters that may still be added
            split = two_means(members) if room > 0 and len(members) >= _MIN_SPLIT_POINTS else None
            if split is not None and should_split(members, *split):
                proposal.extend(split[0])
            else:
                proposal.append(centre)
        if len(proposal) == len(centres):
            break
        centres = np.stack(proposal)
    return assignments


def _lloyd(unit: np.ndarray, centres: np.ndarray, random_state: int) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning

    model = KMeans(
        n_clusters=len(centres), init=centres.astype(unit.dtype), n_init=1, algorithm="lloyd",
        random_state=random_state,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        assignments = model.fit_predict(unit)
    return assignments, model.cluster_centers_


def two_means(members: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Two child centres and each member's child (0 or 1), by 2-means started, as in G-Means, at
    the mean +- the principal axis scaled by sqrt(2 lambda / pi); None if the members cannot be
    split (all equal, or one child ends empty)."""
    members = members.astype(np.float64)
    mean = members.mean(axis=0)
    axis, variance = _principal_axis(members - mean)
    if variance <= 1e-12:
        return None
    offset = axis * math.sqrt(2 * variance / math.pi)
    centres = np.stack([mean + offset, mean - offset])
    for _ in range(_TWO_MEANS_ITERATIONS):
        # Nearer to centre 0 than to centre 1, written as a projection on their difference.
        first = members @ (centres[0] - centres[1]) > (centres[0] @ centres[0] - centres[1] @ centres[1]) / 2
        if first.all() or not first.any():
            return None
        updated = np.stack([members[first].mean(axis=0), members[~first].mean(axis=0)])
        if np.allclose(updated, centres):
            break
        centres = updated
    return centres, (~first).astype(np.int64)


def _principal_axis(centred: np.ndarray) -> tuple[np.ndarray, float]:
    """The first principal axis of centred rows and the variance along it, from the eigenvectors
    of whichever is smaller, the d x d scatter matrix or the n x n Gram matrix: most clusters have
    fewer members than dimensions, and a 100 x 100 problem is ~20x cheaper than a 384 x 384 one."""
    n, d = centred.shape
    if n < d:
        values, vectors = np.linalg.eigh(centred @ centred.T)
        axis = centred.T @ vectors[:, -1]
        axis = normalize_rows(axis, dtype=None)
    else:
        values, vectors = np.linalg.eigh(centred.T @ centred)
        axis = vectors[:, -1]
    return axis, float(values[-1]) / n


def _bic(members: np.ndarray, centres: np.ndarray, labels: np.ndarray) -> float:
    """Pelleg & Moore's BIC of identical spherical Gaussians (one variance for every dimension)
    fitted to ``members``; higher is better."""
    r, m = members.shape
    k = len(centres)
    residual = float(((members - centres[labels]) ** 2).sum())
    variance = max(residual / (m * (r - k)), 1e-12)
    sizes = np.bincount(labels, minlength=k)
    log_likelihood = (
        float((sizes * np.log(sizes)).sum()) - r * math.log(r)
        - r * m / 2 * math.log(2 * math.pi * variance) - m * (r - k) / 2
    )  # fmt: skip
    parameters = k * m + k  # k - 1 mixing weights, k centres of m coordinates, one variance
    return log_likelihood - parameters / 2 * math.log(r)


def bic_prefers_split(members: np.ndarray, children: np.ndarray, labels: np.ndarray) -> bool:
    members = members.astype(np.float64)
    parent = _bic(members, members.mean(axis=0, keepdims=True), np.zeros(len(members), dtype=np.int64))
    return _bic(members, children, labels) > parent


def non_gaussian(members: np.ndarray, significance: float) -> bool:
    """G-Means' test: project the members on the line through two 2-means centres and reject
    Gaussianity with the Anderson-Darling test (mean and variance estimated) at ``significance``.

    Unlike Hamerly & Elkan, the line is found on every other member and the test runs on the rest.
    Found and tested on the same points, the line is picked among hundreds of dimensions for the
    widest gap, and the projection of even one Gaussian looks bimodal: we measured every single
    Gaussian of 60-2,000 points in 64 or 384 dimensions rejected, so G-Means would split every
    cluster down to the minimum size. On held-out points the test keeps its level (8-12% at 10%)
    and still tells two Gaussians 6 standard deviations apart from one."""
    learn, held_out = members[0::2].astype(np.float64), members[1::2].astype(np.float64)
    split = two_means(learn)
    if split is None:
        return False
    direction = split[0][0] - split[0][1]
    return anderson_darling_pvalue(held_out @ direction) < significance


def anderson_darling_pvalue(values: np.ndarray) -> float:
    """p-value of the Anderson-Darling normality test with estimated mean and variance, from
    D'Agostino & Stephens (1986): the modified statistic A*^2 = A^2 (1 + 0.75/n + 2.25/n^2) and
    their piecewise fit (the one R's nortest uses). Written out because scipy's ``anderson``
    changes its interface in 1.17 to 1.19; A*^2 = 0.631 gives p = 0.10."""
    from scipy.stats import norm

    n = len(values)
    spread = values.std(ddof=1)
    if spread <= 0:
        return 1.0
    z = np.sort((values - values.mean()) / spread)
    weights = (2 * np.arange(1, n + 1) - 1) / n
    a2 = -n - float((weights * (norm.logcdf(z) + norm.logsf(z[::-1]))).sum())
    a2 *= 1 + 0.75 / n + 2.25 / n**2
    if a2 >= 0.6:
        p = math.exp(1.2937 - 5.709 * a2 + 0.0186 * a2**2)
    elif a2 >= 0.34:
        p = math.exp(0.9177 - 4.279 * a2 - 1.38 * a2**2)
    elif a2 > 0.2:
        p = 1 - math.exp(-8.318 + 42.796 * a2 - 59.938 * a2**2)
    else:
        p = 1 - math.exp(-13.436 + 101.14 * a2 - 223.73 * a2**2)
    return min(max(p, 0.0), 1.0)
