"""SciPIP's pictures and rows for people: the keyword graph, and one row per retrieved paper."""

from __future__ import annotations

import io
import math

from .evaluation import Query
from .keywords import KeywordGraph
from .retrieval import Retrieval

# The picture shows the most shared keywords; a graph of hundreds of labels is unreadable.
PICTURE_KEYWORDS = 30


def keyword_graph_png(graph: KeywordGraph, shown: int = PICTURE_KEYWORDS) -> bytes:
    """The most shared keywords on a circle, sized by their papers, joined where they co-occur
    (thicker for more shared papers)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    keywords = sorted(graph.holders, key=lambda k: (-len(graph.holders[k]), k))[:shown]
    place = {
        k: (
            math.cos(2 * math.pi * n / max(len(keywords), 1)),
            math.sin(2 * math.pi * n / max(len(keywords), 1)),
        )
        for n, k in enumerate(keywords)
    }
    figure = Figure(figsize=(9, 9))
    FigureCanvasAgg(figure)
    axis = figure.add_subplot()
    for (a, b), count in graph.co_occurrences().items():
        if a in place and b in place:
            axis.plot(
                *zip(place[a], place[b], strict=True), color="#8899aa", linewidth=0.6 * count, alpha=0.6
            )
    for keyword, (x, y) in place.items():
        axis.scatter([x], [y], s=40 * len(graph.holders[keyword]), color="#3366aa", zorder=3)
        axis.annotate(keyword, (x * 1.08, y * 1.08), fontsize=7, ha="center", va="center")
    axis.set_xlim(-1.5, 1.5)
    axis.set_ylim(-1.5, 1.5)
    axis.set_axis_off()
    axis.set_title(
        f"{len(graph.papers)} papers, {len(graph.holders)} keywords (the {len(keywords)} most shared)"
    )
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    return buffer.getvalue()


def retrieval_rows(collection: str, query: Query, found: Retrieval) -> list[dict]:
    """One row per paper SKC found for ``query``: its routes, cluster and whether the filter kept it."""
    cluster_of = {doc: n for n, members in enumerate(found.clusters) for doc in members}
    return [
        {
            "collection": collection,
            "query_id": query.query_id,
            "background": query.background,
            "entities": list(query.entities),
            "position": position,
            "doc_id": doc,
            "routes": routes,
            "similarity": found.similarity.get(doc),
            "cluster": cluster_of.get(doc),
            "selected": doc in found.selected,
        }
        for position, (doc, routes) in enumerate(found.routes.items(), start=1)
    ]
