"""SciPIP's pictures and rows for people: the keyword graph, and one row per retrieved paper."""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence

from ...markdown import markdown_table
from .evaluation import Query
from .keywords import KeywordGraph, filter_values
from .retrieval import Library, Retrieval, SciPIPSettings
from .schemas import TAU

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


TAU_COLUMNS = ["tau", "clusters_per_query", "merged_per_query", "skc+filter recall@10"]


def tau_source(configured: float | None, library: Library) -> str:
    if configured is not None:
        return f"{configured} (configured; the paper's 0.8 was set for jina-embeddings-v3)"
    if library.tau is None:
        return f"{TAU} (the paper's; no calibration for this library)"
    return library.tau.describe("calibrated to the embedder:") + "; the paper's 0.8 is for jina-embeddings-v3"


def keyword_source(library: Library) -> str:
    space = library.graph.space
    if space.embed is None:
        return "equal normal forms only (no embedder)"
    return f"keywords match at cosine >= {space.threshold:.3f} (calibrated to the embedder) or equal normal forms"


def filter_source(config, library: Library) -> str:
    values = filter_values(library.graph.papers)
    m = config.neighbour_min_papers or values.min_papers
    n = config.neighbour_keep if config.neighbour_keep is not None else values.keep
    chosen = "configured" if config.neighbour_min_papers or config.neighbour_keep is not None else "from the collection"
    return f"m = {m}, n = {n} ({chosen}: {values.reason})"


def settings_row(collection: str, config, settings: SciPIPSettings, library: Library, embedder: str) -> dict:
    """What retrieval ran with, and where each derived value came from (for the report)."""
    return {
        "collection": collection,
        "top_k": settings.top_k,
        "n_cocite": settings.n_cocite,
        "tau": settings.tau,
        "tau_source": tau_source(config.tau, library),
        "n_papers": settings.n_papers,
        "neighbour_min_papers": settings.neighbour_min_papers,
        "neighbour_keep": settings.neighbour_keep,
        "keyword_filter": filter_source(config, library),
        "keyword_threshold": library.graph.space.threshold,
        "keyword_source": keyword_source(library),
        "embedder": embedder,
    }


CHART_FILE = "scipip_scores.png"
RECALL_COLUMNS = ["variant", "recall@5", "recall@10"]
SHARE_COLUMNS = ["method", "ideas", "novelty", "clarity", "feasibility", "relevance", "helpful"]


def render_chart(recall: Sequence[Mapping], shares: Sequence[Mapping]) -> bytes:
    """Left: leave-one-out recall@10 per retrieval variant; right: the share of ideas rated >= 4
    per method and rating."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(11, 4))
    FigureCanvasAgg(figure)
    left, right = figure.subplots(1, 2)
    shown = [row for row in recall if row["recall@10"] is not None]
    left.bar([row["variant"] for row in shown], [row["recall@10"] for row in shown], color="#3366aa")
    left.set_ylim(0, 1)
    left.set_title("leave-one-out recall@10 (last bar: any order)")
    left.tick_params(axis="x", labelrotation=20, labelsize=8)
    ratings = [c for c in SHARE_COLUMNS if c not in ("method", "ideas")]
    width = 0.8 / max(len(shares), 1)
    for n, row in enumerate(shares):
        right.bar(
            [k + n * width for k in range(len(ratings))],
            [row[r] or 0.0 for r in ratings],
            width,
            label=row["method"],
        )
    right.set_xticks([k + 0.4 - width / 2 for k in range(len(ratings))], ratings)
    right.set_ylim(0, 1)
    right.set_title("share of ideas rated >= 4 (helpful: yes)")
    right.legend(fontsize=7)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    return buffer.getvalue()


def render_report(
    collection: str,
    recall: Sequence[Mapping],
    shares: Sequence[Mapping],
    judge: str,
    notes: Sequence[str],
    example: Mapping | None,
) -> str:
    lines = [
        f"# SciPIP on `{collection}`",
        "",
        "## Retrieval: leave-one-out recall",
        "",
        (
            "Each paper's background is a query against the collection without that paper; recall of "
            "the papers it cites in the collection."
        ),
        "",
        markdown_table(list(recall), RECALL_COLUMNS),
        "",
        f"## Ideas (judge: {judge})",
        "",
        "The share of each method's ideas rated >= 4 (Table 2), and of those judged helpful.",
        "",
        markdown_table(list(shares), SHARE_COLUMNS),
        "",
        f"![recall and idea ratings]({CHART_FILE})",
        "",
        "## Notes",
        "",
        *[f"- {note}" for note in notes],
        "",
    ]
    if example:
        lines += [f"## Example: {example['background'][:200]}", ""]
        for idea in example["ideas"]:
            inspired = f" (inspired by: {'; '.join(idea['inspired_by'])})" if idea["inspired_by"] else ""
            lines += [f"**{idea['title']}**{inspired}", "", idea["text"], ""]
    return "\n".join(lines)
