"""Leave-one-out retrieval recall: each collection paper's background is a query against the
collection without that paper, and the papers it cites within the collection are what a good
retrieval finds. Recall@k for semantic-only, keyword-only, SKC (in the order its routes found
papers) and SKC with the clustering filter, on the same queries."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.startup.lazy import np

from ...citations import missing_links
from .retrieval import DEFAULT_SETTINGS, Library, Retrieval, for_library, keyword_ranking, retrieve
from .schemas import KEYWORD_ONLY, SEMANTIC_ONLY, SKC, SKC_FILTERED, VARIANTS
from .settings import RetrievalSettings
from .tasks import SCIPIP_ENTITIES

if TYPE_CHECKING:
    from ...llm import LLMClient
    from .backgrounds import Background

RECALL_AT = 10
# The cut-offs reported; with 12-20 papers @10 ranks most of the collection, @5 separates more.
RECALL_KS = (5, 10)


@dataclass(frozen=True)
class Query:
    """A research background to retrieve for: its unit vector and entities."""

    query_id: str
    background: str
    vector: np.ndarray
    entities: tuple[str, ...]
    held_out: str | None = None  # leave-one-out: the paper whose background this is


def make_queries(
    client: LLMClient, embed: Callable[[list[str]], np.ndarray], backgrounds: Sequence[Background]
) -> list[Query]:
    """Each background as a query: its unit vector, and its entities (given with it, or extracted
    by the entities task, Appendix D; a failed extraction leaves none)."""
    missing = [b for b in backgrounds if b.entities is None]
    batch = client.run_many(SCIPIP_ENTITIES, [{"content": b.background} for b in missing])
    extracted = {
        b.background_id: tuple(item.value.entities) if item.ok else ()
        for b, item in zip(missing, batch.items, strict=True)
    }
    vectors = normalize_rows(embed([b.background for b in backgrounds])) if backgrounds else []
    return [
        Query(
            b.background_id,
            b.background,
            vector,
            b.entities if b.entities is not None else extracted[b.background_id],
            b.held_out,
        )
        for b, vector in zip(backgrounds, vectors, strict=True)
    ]


@dataclass(frozen=True)
class RecallRow:
    """One variant's ranking for one held-out paper: which of its top papers the paper cites."""

    query_id: str
    held_out: str
    variant: str
    relevant: int  # the held-out paper's references in the collection
    ranked: tuple[str, ...]  # the top RECALL_AT
    hits: tuple[bool, ...]  # whether each ranked paper is one of them
    clusters: int  # how many clusters the filter made of SKC's papers for this query
    candidates: int  # the papers it could rank (the collection without the held-out one)
    merged: int = 0  # SKC's papers that joined another's cluster (found - clusters)

    def recall_at(self, k: int) -> float:
        return sum(self.hits[:k]) / self.relevant


def variant_rankings(
    library: Library, query: Query, settings: RetrievalSettings
) -> tuple[dict[str, list[str]], Retrieval]:
    """Each variant's ranked papers for ``query``, and the SKC retrieval they came from."""
    settings = for_library(settings, library)
    skc = retrieve(library, query.vector, query.entities, settings)
    by_similarity = sorted(skc.similarity, key=lambda doc: (-skc.similarity[doc], doc))
    expanded = library.graph.expand(query.entities, settings.neighbour_min_papers, settings.neighbour_keep)
    rankings = {
        SEMANTIC_ONLY: by_similarity,
        KEYWORD_ONLY: keyword_ranking(library, list(query.entities) + expanded, matched_only=False),
        SKC: skc.found,
        SKC_FILTERED: skc.selected,
    }
    return rankings, skc


def leave_one_out(
    library: Library,
    queries: Sequence[Query],
    references: Mapping[str, Sequence[str]],
    settings: RetrievalSettings = DEFAULT_SETTINGS,
    k: int = RECALL_AT,
) -> list[RecallRow]:
    """Recall@k of every variant for every held-out query whose paper cites another collection
    paper (a paper citing none has nothing to find and is left out)."""
    rows = []
    settings = for_library(settings, library)  # once, from the whole collection
    for query in queries:
        held_out = query.held_out
        relevant = {
            doc for doc in references.get(held_out or "", ()) if doc != held_out and doc in library.doc_ids
        }
        if held_out is None or not relevant:
            continue
        searched = library.without(held_out)
        rankings, skc = variant_rankings(searched, query, settings)
        for variant, ranked in rankings.items():
            top = tuple(ranked[:k])
            hits = tuple(doc in relevant for doc in top)
            rows.append(
                RecallRow(
                    query.query_id,
                    held_out,
                    variant,
                    len(relevant),
                    top,
                    hits,
                    len(skc.clusters),
                    len(searched.doc_ids),
                    len(skc.found) - len(skc.clusters),
                )
            )
    return rows


def recall_table(rows: Sequence[RecallRow], ks: Sequence[int] = RECALL_KS) -> list[dict]:
    """Each variant's recall@k averaged over queries (macro), then what any order would reach:
    min(k, candidates) / candidates."""
    table = []
    for variant in VARIANTS:
        mine = [row for row in rows if row.variant == variant]
        table.append(
            {"variant": variant, **{f"recall@{k}": _mean([r.recall_at(k) for r in mine]) for k in ks}}
        )
    queries = {row.query_id: row.candidates for row in rows}
    chance = {f"recall@{k}": _mean([min(k, n) / n for n in queries.values() if n]) for k in ks}
    return [*table, {"variant": "chance (any order)", **chance}]


def _mean(values: Sequence[float]) -> float | None:
    return round(float(np.mean(values)), 3) if values else None


def skipped_routes(library: Library) -> dict[str, str]:
    """SKC's routes that could not run on this collection, and why."""
    why = missing_links(library.citations, "The co-citation route")
    return {"co-citation route": why} if why else {}


def why_no_recall(library: Library, leave_one_out: bool) -> str:
    """Why no leave-one-out query was scored."""
    if not leave_one_out:
        return "leave_one_out is off."
    if len(library.doc_ids) < 3:
        return (
            f"leave-one-out needs at least three summarized papers (one held out, one it cites, one to rank "
            f"against); the collection has {len(library.doc_ids)}."
        )
    return missing_links(library.citations, "Leave-one-out recall") or (
        "no held-out paper cites another paper of the collection: there is nothing to find."
    )
