"""Which paper of a collection cites which: references cut into entries (``references``), matched to
the collection's own papers (``matching``), and the graph they make (``graph``): edges, the
unmatched references with the reason, co-citation counts and a picture."""

from .graph import (
    CitationGraph,
    CitingDocument,
    build_citation_graph,
    citation_links,
    co_citations,
    edge_table,
    missing_links,
    reference_table,
    render_citation_graph_png,
)
from .matching import Match, MatchSettings, Paper, match_references, title_similarity
from .references import Reference, fold, split_references

__all__ = [
    "CitationGraph",
    "CitingDocument",
    "Match",
    "MatchSettings",
    "Paper",
    "Reference",
    "build_citation_graph",
    "citation_links",
    "co_citations",
    "edge_table",
    "fold",
    "match_references",
    "missing_links",
    "reference_table",
    "render_citation_graph_png",
    "split_references",
    "title_similarity",
]
