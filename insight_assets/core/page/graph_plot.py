"""A PNG of the theme graph: chunks and centroids projected to 2-D (PCA), the graph's edges between
centroids, and the labels of the largest themes. Matplotlib is imported inside the function and
drawn with the Agg canvas directly (no pyplot, so no global figure state across threads)."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.startup.lazy import np

if TYPE_CHECKING:
    from insight_assets.core.themes.clustering import ThemeGraph

# At most this many chunks are drawn (a seeded sample): 5,000 dots already fill the picture, and
# the PCA, the drawing and the PNG stay well under a second for any collection size.
MAX_POINTS = 5000
LABELLED_CLUSTERS = 12
_LABEL_CHARS = 40


def render_theme_graph_png(
    graph: ThemeGraph,
    vectors: np.ndarray | None = None,
    *,
    max_points: int = MAX_POINTS,
    labelled: int = LABELLED_CLUSTERS,
    random_state: int = 42,
) -> bytes:
    """The picture as PNG bytes. ``vectors`` are the chunks' vectors in ``graph.chunk_ids`` order
    (None: centroids only); chunks are coloured by cluster, centroids sized by cluster size, and
    the ``labelled`` largest clusters carry their labels."""
    from matplotlib import colormaps
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import LineCollection
    from matplotlib.figure import Figure

    n = 0 if vectors is None else len(vectors)
    rows = np.arange(n)
    if n > max_points:
        rows = np.sort(np.random.default_rng(random_state).choice(n, size=max_points, replace=False))
    centroids = np.asarray(graph.centroids, dtype=np.float64)
    points = (
        np.zeros((0, centroids.shape[1])) if vectors is None else np.asarray(vectors, dtype=np.float64)[rows]
    )
    points = normalize_rows(points, dtype=None)
    coords = _project(np.vstack([centroids, points]), random_state)
    centre_xy, point_xy = coords[: graph.k], coords[graph.k :]

    figure = Figure(figsize=(9, 7), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    colours = colormaps["tab20"](np.arange(graph.k) % 20)
    if len(point_xy):
        dot = float(np.clip(4000 / len(point_xy), 2, 12))  # big enough to see when there are few
        axes.scatter(
            *point_xy.T, s=dot, c=colours[np.asarray(graph.assignments)[rows]], alpha=0.45, linewidths=0
        )
    segments = [(centre_xy[a], centre_xy[b]) for a, b, _ in graph.edges]
    axes.add_collection(LineCollection(segments, colors="0.45", linewidths=0.6, alpha=0.5, zorder=2))
    sizes = np.asarray(graph.sizes, dtype=np.float64)
    shrink = min(1.0, 4 / np.sqrt(graph.k))  # many themes: smaller dots, or they hide each other
    axes.scatter(
        *centre_xy.T, s=shrink * (20 + 180 * np.sqrt(sizes / max(sizes.max(), 1))), c=colours,
        edgecolors="black", linewidths=0.7, zorder=3,
    )  # fmt: skip
    for cluster in np.argsort(-sizes, kind="stable")[:labelled]:
        label = graph.labels[cluster]
        text = label if len(label) <= _LABEL_CHARS else label[: _LABEL_CHARS - 1] + "…"
        axes.annotate(
            f"{cluster}: {text}", centre_xy[cluster], xytext=(4, 4), textcoords="offset points",
            fontsize=7, zorder=4, bbox={"boxstyle": "round,pad=0.2", "fc": "white", "alpha": 0.7, "lw": 0},
        )  # fmt: skip
    axes.autoscale_view()
    axes.set_xticks([])
    axes.set_yticks([])
    axes.set_xlabel("first principal component")
    axes.set_ylabel("second principal component")
    shown = f", {len(rows):,} of {n:,} chunks shown" if n > len(rows) else f", {n:,} chunks"
    axes.set_title(f"Theme graph: {graph.k} themes, {len(graph.edges)} edges ({graph.method}){shown}")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def _project(rows: np.ndarray, random_state: int) -> np.ndarray:
    """2-D PCA coordinates of ``rows``; with fewer than two rows or dimensions, or all rows equal,
    the missing coordinates are 0 (one theme with no chunks is a single dot)."""
    from sklearn.decomposition import PCA

    components = min(2, len(rows) - 1, rows.shape[1])
    coords = np.zeros((len(rows), 2))
    if components >= 1 and np.ptp(rows, axis=0).max() > 1e-12:
        coords[:, :components] = PCA(n_components=components, random_state=random_state).fit_transform(rows)
    return coords
