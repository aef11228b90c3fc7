"""The collection's citation graph: every reference with its match, the edges between papers, the
co-citation counts, and a picture."""

from __future__ import annotations

import functools
import io
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from insight_assets.core.startup.lazy import pa

from .matching import DEFAULT_MATCH, Match, MatchSettings, Paper, TitleIndex
from .references import split_references


@dataclass(frozen=True)
class CitingDocument:
    """A collection paper with what the graph needs of it: title, first page, references block."""

    doc_id: str
    title: str
    first_page: str
    references: str
    doi: str = ""  # from the paper's library entry; matched before any title


@dataclass(frozen=True)
class CitationGraph:
    matches: dict[str, list[Match]]  # citing doc id -> one match per reference, in order
    titles: dict[str, str]  # doc id -> title, for every paper of the collection

    @property
    def edges(self) -> list[dict]:
        """One edge per (citing, cited) pair: the first reference that cites it and its score."""
        edges: dict[tuple[str, str], dict] = {}
        for citing, matches in self.matches.items():
            for match in matches:
                if match.cited_doc_id and (citing, match.cited_doc_id) not in edges:
                    edges[(citing, match.cited_doc_id)] = {
                        "citing_doc_id": citing,
                        "cited_doc_id": match.cited_doc_id,
                        "reference_text": match.reference.text,
                        "match_score": round(match.title_similarity, 4),
                    }
        return list(edges.values())

    @property
    def reference_count(self) -> int:
        return sum(len(matches) for matches in self.matches.values())


def build_citation_graph(
    documents: Sequence[CitingDocument], settings: MatchSettings = DEFAULT_MATCH
) -> CitationGraph:
    index = TitleIndex([Paper(doc.doc_id, doc.title, doc.first_page, doc.doi) for doc in documents], settings)
    return CitationGraph(
        matches={doc.doc_id: index.match(doc.doc_id, split_references(doc.references)) for doc in documents},
        titles={doc.doc_id: doc.title for doc in documents},
    )


def citation_links(warehouse, collection: str) -> list[tuple[str, str]]:
    """The collection's (citing, cited) paper pairs as the ``citations`` asset stored them, sorted."""
    return [
        (row["citing_doc_id"], row["cited_doc_id"])
        for row in warehouse.rows(
            "SELECT DISTINCT citing_doc_id, cited_doc_id FROM citations WHERE collection = ? ORDER BY 1, 2",
            [collection],
        )
    ]


def missing_links(links: Sequence[tuple[str, str]], needed_for: str) -> str | None:
    """Why ``needed_for`` was skipped when the collection has no citation links; None when it has some."""
    if links:
        return None
    return (
        f"{needed_for} needs citation links between the collection's papers, and it has none "
        "(see the `citation_links` check of `citations`)."
    )


def co_citations(edges: Sequence[dict]) -> list[tuple[str, str, int]]:
    """``(paper a, paper b, count)``: how many papers cite both a and b (a < b), most first."""
    cited_by: dict[str, set[str]] = {}
    for edge in edges:
        cited_by.setdefault(edge["citing_doc_id"], set()).add(edge["cited_doc_id"])
    counts = Counter(pair for cited in cited_by.values() for pair in combinations(sorted(cited), 2))
    return [(a, b, count) for (a, b), count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


@functools.cache
def reference_columns() -> dict[str, pa.DataType]:
    return {
        "citing_doc_id": pa.string(),
        "ref_index": pa.int32(),
        "text": pa.string(),
        "year": pa.int32(),
        "first_author": pa.string(),
        "cited_doc_id": pa.string(),
        "candidate_doc_id": pa.string(),
        "title_similarity": pa.float64(),
        "reason": pa.string(),
        "label": pa.string(),
    }


def reference_table(collection: str, graph: CitationGraph) -> pa.Table:
    """Every reference of every paper, matched (``cited_doc_id``) or not (``reason`` says why)."""
    rows = [
        {
            "collection": collection,
            "citing_doc_id": citing,
            "ref_index": match.reference.index,
            "text": match.reference.text,
            "year": match.reference.year or None,
            "first_author": match.reference.first_author,
            "cited_doc_id": match.cited_doc_id,
            "candidate_doc_id": match.candidate_doc_id,
            "title_similarity": round(match.title_similarity, 4),
            "reason": match.reason,
            "label": match.reference.label,
        }
        for citing, matches in graph.matches.items()
        for match in matches
    ]
    schema = pa.schema([("collection", pa.string()), *reference_columns().items()])
    return pa.Table.from_pylist(rows, schema=schema)


def edge_table(collection: str, graph: CitationGraph) -> pa.Table:
    schema = pa.schema(
        [
            ("collection", pa.string()),
            ("citing_doc_id", pa.string()),
            ("cited_doc_id", pa.string()),
            ("reference_text", pa.string()),
            ("match_score", pa.float64()),
        ]
    )
    return pa.Table.from_pylist([{"collection": collection, **edge} for edge in graph.edges], schema=schema)


def render_citation_graph_png(titles: dict[str, str], edges: Sequence[dict], label_chars: int = 44) -> bytes:
    """The papers on a circle (in title order), an arrow from each citing paper to each paper it
    cites, dots sized by how often the collection cites the paper."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    order = sorted(titles, key=lambda doc: (titles[doc].lower(), doc))
    angle = {doc: 2 * math.pi * i / max(len(order), 1) for i, doc in enumerate(order)}
    xy = {doc: (math.cos(angle[doc]), math.sin(angle[doc])) for doc in order}
    cited = Counter(edge["cited_doc_id"] for edge in edges)

    figure = Figure(figsize=(9, 9), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for edge in edges:
        axes.annotate(
            "", xy=xy[edge["cited_doc_id"]], xytext=xy[edge["citing_doc_id"]],
            arrowprops={"arrowstyle": "-|>", "color": "0.35", "alpha": 0.55, "lw": 0.8,
                        "shrinkA": 6, "shrinkB": 8},
        )  # fmt: skip
    axes.scatter(
        [xy[doc][0] for doc in order], [xy[doc][1] for doc in order],
        s=[30 + 60 * cited[doc] for doc in order], c=["tab:orange" if cited[doc] else "tab:blue" for doc in order],
        edgecolors="black", linewidths=0.6, zorder=3,
    )  # fmt: skip
    for doc in order:
        title = titles[doc] or doc
        label = title if len(title) <= label_chars else title[: label_chars - 1] + "…"
        x, y = xy[doc]
        axes.annotate(
            f"{label} ({cited[doc]})" if cited[doc] else label, (x, y), xytext=(8 * x, 8 * y),
            textcoords="offset points", fontsize=7, ha="left" if x >= 0 else "right", va="center",
        )  # fmt: skip
    axes.set_xlim(-1.9, 1.9)
    axes.set_ylim(-1.3, 1.3)
    axes.set_axis_off()
    axes.set_title(
        f"Citations between the collection's papers: {len(order)} papers, {len(edges)} links "
        "(arrow: cites; in brackets: times cited)",
        fontsize=9,
    )
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()
