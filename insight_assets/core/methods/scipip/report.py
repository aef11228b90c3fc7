"""SciPIP's pictures and rows for people: the keyword graph, and one row per retrieved paper."""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from insight_assets.core.page.markdown import markdown_table
from insight_assets.core.page.placeholder_mark import mark_placeholder

from .keywords import KeywordGraph, filter_values
from .schemas import TAU

if TYPE_CHECKING:
    from .evaluation import Query
    from .retrieval import Library, Retrieval
    from .settings import RetrievalSettings

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
    return (
        f"a keyword matches a paper at cosine >= {space.threshold:.3f} to one of its keywords or to its "
        "background (calibrated to the embedder), or by an equal normal form"
    )


def filter_source(config, settings: RetrievalSettings, library: Library) -> str:
    """The keyword filter's m and n as ``settings`` resolved them, and where they came from."""
    configured = config.neighbour_min_papers or config.neighbour_keep is not None
    chosen = "configured" if configured else "from the collection"
    return (
        f"m = {settings.neighbour_min_papers}, n = {settings.neighbour_keep} "
        f"({chosen}: {filter_values(library.graph.papers).reason})"
    )


def settings_row(
    collection: str, config, settings: RetrievalSettings, library: Library, embedder: str
) -> dict:
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
        "keyword_filter": filter_source(config, settings, library),
        "keyword_threshold": library.graph.space.threshold,
        "keyword_source": keyword_source(library),
        "embedder": embedder,
    }


CHART_FILE = "scipip_scores.png"
RECALL_COLUMNS = ["variant", "recall@5", "recall@10"]
SHARE_COLUMNS = ["judge", "method", "ideas", "novelty", "clarity", "feasibility", "relevance", "helpful"]
WIN_COLUMNS = ["judge", "baseline", "criterion", "pairs", "scipip_wins", "ties", "baseline_wins"]
AGREEMENT_COLUMNS = ["judge_a", "judge_b", "ideas", "novelty", "clarity", "feasibility", "relevance"]
SCIENTIST_NOTE = (
    "The ai-scientist baseline follows The AI Scientist's idea stage (Lu et al., 2024): ideas one at "
    "a time given those already made, up to 3 self-reflection rounds each, and a novelty check; here "
    "the task is the research background (not a code template) and the novelty check reads the "
    "collection's retrieved papers once instead of searching Semantic Scholar."
)


@dataclass(frozen=True)
class ReportTables:
    recall: Sequence[Mapping]
    expanded: Sequence[Mapping]
    short: Sequence[Mapping]
    wins: Sequence[Mapping]
    agreement: Sequence[Mapping]
    settings: Mapping | None
    merged: str


def render_chart(
    recall: Sequence[Mapping], shares: Sequence[Mapping], wins: Sequence[Mapping], by_model: bool = True
) -> bytes:
    """``chart_figure`` as a PNG."""
    buffer = io.BytesIO()
    chart_figure(recall, shares, wins, by_model).savefig(buffer, format="png", dpi=90)
    return buffer.getvalue()


def chart_figure(
    recall: Sequence[Mapping], shares: Sequence[Mapping], wins: Sequence[Mapping], by_model: bool = True
) -> Any:
    """Left: leave-one-out recall@10 per retrieval variant; middle: the share of expanded ideas
    rated >= 4 per method and rating (first judge); right: SciPIP's wins, ties and losses against
    each baseline over all criteria (first judge). Without ``by_model`` the ratings and wins are
    placeholders, and their panels carry the mark (recall is measured either way)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(15, 4))
    FigureCanvasAgg(figure)
    left, middle, right = figure.subplots(1, 3)
    shown = [row for row in recall if row["recall@10"] is not None]
    left.bar([row["variant"] for row in shown], [row["recall@10"] for row in shown], color="#3366aa")
    left.set_ylim(0, 1)
    left.set_title("leave-one-out recall@10 (last bar: any order)")
    left.tick_params(axis="x", labelrotation=20, labelsize=8)
    first = shares[0]["judge"] if shares else None
    mine = [row for row in shares if row["judge"] == first]
    ratings = [c for c in SHARE_COLUMNS if c not in ("judge", "method", "ideas")]
    width = 0.8 / max(len(mine), 1)
    for n, row in enumerate(mine):
        middle.bar(
            [k + n * width for k in range(len(ratings))],
            [row[r] or 0.0 for r in ratings],
            width,
            label=row["method"],
        )
    middle.set_xticks([k + 0.4 - width / 2 for k in range(len(ratings))], ratings)
    middle.set_ylim(0, 1)
    middle.set_title("expanded ideas rated >= 4 (helpful: yes)")
    middle.legend(fontsize=7)
    judge = wins[0]["judge"] if wins else None
    baselines = list(dict.fromkeys(row["baseline"] for row in wins if row["judge"] == judge))
    totals = {
        b: [
            sum(row[c] * row["pairs"] for row in wins if row["judge"] == judge and row["baseline"] == b)
            / max(1, sum(row["pairs"] for row in wins if row["judge"] == judge and row["baseline"] == b))
            for c in ("scipip_wins", "ties", "baseline_wins")
        ]
        for b in baselines
    }
    bottom = [0.0] * len(baselines)
    for k, (label, colour) in enumerate(
        (("SciPIP wins", "#3366aa"), ("tie", "#bbbbbb"), ("baseline wins", "#cc6633"))
    ):
        values = [totals[b][k] for b in baselines]
        right.bar(baselines, values, bottom=bottom, color=colour, label=label)
        bottom = [x + y for x, y in zip(bottom, values, strict=True)]
    right.set_ylim(0, 1)
    right.set_title("SciPIP vs each baseline (pairwise, both orders)")
    right.tick_params(axis="x", labelrotation=20, labelsize=8)
    right.legend(fontsize=7)
    if not by_model:
        for axes in (middle, right):
            mark_placeholder(axes, "no model judged")
    figure.tight_layout()
    return figure


# Offline, the ratings are no judgement of the methods: the same nearest-paper similarity makes both.
NOT_JUDGED = (
    "Not judged: needs a model. Offline, an idea's novelty is 5·(1 − n) and its feasibility "
    "5·min(1, n / 0.3), n its similarity to the nearest paper, so a method that strays from the papers "
    "rates novel and one that stays close rates feasible by the formulas, not by its ideas. The ratings "
    "and win rates below are placeholders until a model judges (`judges` in `scipip_scores`' config); "
    "the retrieval recall is measured."
)


def render_report(
    collection: str,
    tables: ReportTables,
    judge: str,
    notes: Sequence[str],
    example: Mapping | None,
    *,
    by_model: bool = True,
) -> str:
    """The report; ``by_model``: whether a model judged (otherwise the ratings are placeholders)."""
    settings = tables.settings or {}
    placeholder = "" if by_model else " (placeholders until a model judges)"
    lines = [
        f"# SciPIP on `{collection}`",
        "",
        *([] if by_model else [NOT_JUDGED, ""]),
        f"## Ideas, expanded (judges: {judge}){placeholder}",
        "",
        (
            "Every method's ideas expanded into a problem, a method and an expected outcome (Table 12), "
            "rated as the paper's raters rated them (Table 1): the share rated >= 4, and of those judged helpful."
        ),
        "",
        markdown_table(list(tables.expanded), SHARE_COLUMNS),
        "",
        f"## Pairwise win rates against each baseline (Fig. 4){placeholder}",
        "",
        (
            "SciPIP's idea and a baseline's for the same background, shown as A and B in both orders; "
            "a win counts only when the two orders agree, so position bias reads as a tie."
        ),
        "",
        markdown_table(list(tables.wins), WIN_COLUMNS, empty="No pairs judged."),
        "",
        f"## Ideas, short form{placeholder}",
        "",
        markdown_table(list(tables.short), SHARE_COLUMNS),
        "",
        "## Judges' agreement (Kendall's tau on the ideas both rated)",
        "",
        markdown_table(
            list(tables.agreement),
            AGREEMENT_COLUMNS,
            empty="One judge: configure two or more `judges` to measure agreement.",
        ),
        "",
        "## Retrieval: leave-one-out recall" + ("" if by_model else " (measured)"),
        "",
        (
            "Each paper's background is a query against the collection without that paper; recall of "
            "the papers it cites in the collection."
        ),
        "",
        markdown_table(list(tables.recall), RECALL_COLUMNS),
        "",
        f"- tau: {settings.get('tau_source', 'not recorded')}; {tables.merged}.",
        f"- keywords: {settings.get('keyword_source', 'not recorded')}.",
        f"- keyword filter: {settings.get('keyword_filter', 'not recorded')}.",
        "",
        f"![recall, expanded idea ratings and win rates]({CHART_FILE})",
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
