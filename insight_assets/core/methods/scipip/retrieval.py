"""SKC retrieval (§3.2, Figure 2) over a collection's summarized papers, and the clustering filter.

- *Semantic*: the ``top_k`` papers whose background embedding is nearest the query's.
- *Keyword*: the query's entities, the semantic hits' keywords and any extra keywords (the
  brainstorm path's), expanded by the keyword graph (``KeywordGraph.expand``); a paper is found
  when one of them is among its keywords or in its background (Eq. 4). Keyword hits rank by the
  summed rarity (IDF) of the keywords they match.
- *Co-citation*: for each paper found so far, the ``n_cocite`` papers most often cited together
  with it by other collection papers (Eq. 5).

The found papers keep the order the routes found them (semantic hits by similarity, then keyword
hits by rarity, each followed by its co-cited papers) and every route that found them. The
*filter* merges papers into clusters by **single linkage**: two clusters merge when any pair of
their papers' summary embeddings reaches cosine ``tau`` (the paper's "any pair ... exceeds"); then
``n_papers`` are taken round-robin across clusters, each cluster in the order of its best paper.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from insight_assets.core.startup.lazy import np

from ...citations import co_citations
from .keywords import KeywordGraph, filter_values, normal_keywords, normalise_keyword
from .schemas import (
    COCITE,
    KEYWORD,
    SEMANTIC,
    TAU,
)
from .settings import RetrievalSettings

if TYPE_CHECKING:
    from .calibration import Calibration


def for_library(settings: RetrievalSettings, library: Library) -> RetrievalSettings:
    """``settings`` with every value left unset derived for ``library``: tau calibrated to its
    embedder (``calibration``; the paper's 0.8 is for jina-embeddings-v3, and is used when the library
    has no calibration), the keyword filter's m and n from its keyword statistics (``filter_values``)."""
    if settings.tau is not None and settings.neighbour_min_papers and settings.neighbour_keep is not None:
        return settings  # nothing to derive (retrieval gets resolved settings on every query)
    values = filter_values(library.graph.papers)
    return settings.model_copy(
        update={
            "tau": settings.tau
            if settings.tau is not None
            else (library.tau.threshold if library.tau else TAU),
            "neighbour_min_papers": settings.neighbour_min_papers or values.min_papers,
            "neighbour_keep": settings.neighbour_keep if settings.neighbour_keep is not None else values.keep,
        }
    )


DEFAULT_SETTINGS = RetrievalSettings()


@dataclass(frozen=True)
class Library:
    """The summarized papers retrieval searches: rows of ``background_vectors`` and
    ``summary_vectors`` (unit length) follow ``doc_ids``; ``citations`` are (citing, cited) pairs
    within the collection."""

    doc_ids: tuple[str, ...]
    backgrounds: Mapping[str, str]
    background_vectors: np.ndarray
    summary_vectors: np.ndarray
    graph: KeywordGraph
    citations: tuple[tuple[str, str], ...] = ()
    tau: Calibration | None = None  # the summary threshold calibrated to the library's embedder

    def without(self, doc_id: str) -> Library:
        """The library with ``doc_id`` gone, and its citations with it: a held-out paper's own
        reference list must not link the papers it cites."""
        keep = [n for n, doc in enumerate(self.doc_ids) if doc != doc_id]
        return Library(
            tuple(self.doc_ids[n] for n in keep),
            {doc: text for doc, text in self.backgrounds.items() if doc != doc_id},
            self.background_vectors[keep],
            self.summary_vectors[keep],
            self.graph.without(doc_id),
            tuple(pair for pair in self.citations if doc_id not in pair),
            self.tau,
        )

    @functools.cached_property
    def normal_backgrounds(self) -> dict[str, str]:
        """Each background normalised as keywords are, padded with spaces for whole-word search."""
        return {doc: f" {normalise_keyword(text)} " for doc, text in self.backgrounds.items()}

    def references(self) -> dict[str, list[str]]:
        """For each citing paper, the papers of the library it cites."""
        cited: dict[str, list[str]] = {}
        for citing, paper in self.citations:
            cited.setdefault(citing, []).append(paper)
        return cited

    def co_cited(self) -> dict[str, dict[str, int]]:
        """For each paper, the papers cited together with it and by how many citing papers."""
        edges = [{"citing_doc_id": citing, "cited_doc_id": cited} for citing, cited in self.citations]
        counts: dict[str, dict[str, int]] = {}
        for a, b, count in co_citations(edges):
            counts.setdefault(a, {})[b] = count
            counts.setdefault(b, {})[a] = count
        return counts


@dataclass
class Retrieval:
    """What SKC retrieval found for one query: each paper with the routes that found it, in the
    order found; the keywords used; the clusters and the filtered selection."""

    similarity: dict[str, float]
    semantic: list[str]
    keyword_hits: list[str]
    keywords: list[str]
    expanded: list[str]
    routes: dict[str, list[str]] = field(default_factory=dict)
    clusters: list[list[str]] = field(default_factory=list)
    selected: list[str] = field(default_factory=list)

    @property
    def found(self) -> list[str]:
        return list(self.routes)

    def add(self, doc_id: str, route: str) -> None:
        routes = self.routes.setdefault(doc_id, [])
        if route not in routes:
            routes.append(route)


def keyword_scores(library: Library, keywords: Iterable[str]) -> tuple[dict[str, float], set[str]]:
    """Eq. 4 by keywords: each paper's score, and the papers the keywords *match*. A keyword's
    closeness to a paper is the highest of its cosine to the paper's keywords, its cosine to the
    paper's background embedding, and 1 when its normal form is in the normalised background text;
    it matches at the keyword threshold. A paper scores the sum of the keywords' closeness to it,
    each weighted by the keyword's rarity (IDF over the papers it matches)."""
    wanted = normal_keywords(keywords)
    docs = list(library.graph.papers)
    if not wanted or not docs:
        return {}, set()
    known = list(library.graph.holders)
    column = {keyword: n for n, keyword in enumerate(known)}
    cosine = library.graph.space.similarity(wanted, known)
    threshold = library.graph.space.threshold
    closeness = np.zeros((len(wanted), len(docs)))
    for d, doc in enumerate(docs):
        own = [column[k] for k in library.graph.papers[doc]]
        if own:
            closeness[:, d] = cosine[:, own].max(axis=1)
        text = library.normal_backgrounds.get(doc, "")
        for w, keyword in enumerate(wanted):
            if f" {keyword} " in text:
                closeness[w, d] = 1.0
    vectors = library.graph.space.vectors(wanted)
    if vectors is not None and vectors.shape[1] == library.background_vectors.shape[1]:
        row = {doc: n for n, doc in enumerate(library.doc_ids)}
        closeness = np.maximum(closeness, vectors @ library.background_vectors[[row[doc] for doc in docs]].T)
    matching = closeness >= threshold
    rarity = np.array([library.graph.idf(int(row.sum())) for row in matching])

    scores = rarity @ closeness
    return {doc: float(scores[d]) for d, doc in enumerate(docs)}, {
        doc for d, doc in enumerate(docs) if matching[:, d].any()
    }


def keyword_ranking(library: Library, keywords: Iterable[str], matched_only: bool = True) -> list[str]:
    """Papers by keyword score, best first: those the keywords match (the keyword route's hits),
    or with ``matched_only`` off every paper (the keyword-only variant's full ranking)."""
    scores, matched = keyword_scores(library, keywords)
    ranked = sorted(scores, key=lambda doc: (-scores[doc], doc))
    return [doc for doc in ranked if doc in matched] if matched_only else ranked


def retrieve(
    library: Library,
    query_vector: np.ndarray,
    entities: Sequence[str],
    settings: RetrievalSettings = DEFAULT_SETTINGS,
    extra_keywords: Sequence[str] = (),
) -> Retrieval:
    """SKC retrieval for a query (its background's unit vector and its entities), then the filter."""
    settings = for_library(settings, library)
    cosine = library.background_vectors @ query_vector if len(library.doc_ids) else np.zeros(0)
    similarity = {doc: float(cosine[n]) for n, doc in enumerate(library.doc_ids)}
    by_similarity = sorted(library.doc_ids, key=lambda doc: (-similarity[doc], doc))
    semantic = by_similarity[: settings.top_k]
    given = [*entities, *(k for doc in semantic for k in library.graph.papers.get(doc, ())), *extra_keywords]
    start = normal_keywords(given)
    expanded = library.graph.expand(start, settings.neighbour_min_papers, settings.neighbour_keep)
    keyword_hits = keyword_ranking(library, start + expanded)
    found = Retrieval(similarity, semantic, keyword_hits, start, expanded)
    co_cited = library.co_cited()
    for route, hits in ((SEMANTIC, semantic), (KEYWORD, keyword_hits)):
        for doc in hits:
            found.add(doc, route)
            partners = co_cited.get(doc, {})
            for partner in sorted(partners, key=lambda p: (-partners[p], -similarity.get(p, 0.0), p))[
                : settings.n_cocite
            ]:
                found.add(partner, COCITE)
    found.clusters = cluster(library, found.found, settings.tau)
    found.selected = round_robin(found.clusters, settings.n_papers)
    return found


def cluster(library: Library, doc_ids: Sequence[str], tau: float) -> list[list[str]]:
    """Single-linkage clusters of ``doc_ids`` at summary cosine >= ``tau``; each cluster keeps the
    order of ``doc_ids`` and clusters are ordered by their first member."""
    row = {doc: n for n, doc in enumerate(library.doc_ids)}
    present = [doc for doc in doc_ids if doc in row]
    vectors = library.summary_vectors[[row[doc] for doc in present]] if present else np.zeros((0, 1))
    parent = list(range(len(present)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    close = vectors @ vectors.T >= tau if present else np.zeros((0, 0), bool)
    for i in range(len(present)):
        for j in range(i + 1, len(present)):
            if close[i, j]:
                parent[root(j)] = root(i)
    groups: dict[int, list[str]] = {}
    for i, doc in enumerate(present):
        groups.setdefault(root(i), []).append(doc)
    return sorted(groups.values(), key=lambda members: present.index(members[0]))


def round_robin(clusters: Sequence[Sequence[str]], n: int) -> list[str]:
    """``n`` papers, one from each cluster in turn (its next best), until none are left."""
    chosen: list[str] = []
    depth = 0
    while len(chosen) < n and any(depth < len(c) for c in clusters):
        chosen += [c[depth] for c in clusters if depth < len(c)][: n - len(chosen)]
        depth += 1
    return chosen
