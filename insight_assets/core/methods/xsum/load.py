"""What XSum reads from the warehouse: papers, chunks as citable sources, and its targets' inputs
(the theme graph, the citation graph, the user's file)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from insight_assets.core.ingestion.ingest import load_documents, paper_titles

from ...citations import missing_links
from ...citations.paragraphs import citing_papers
from .runs import paper_input
from .schemas import ABSTRACT_FALLBACK_TOKENS, PaperInput, SummaryTarget
from .targets import (
    USER_TARGETS_FILE,
    LineProblem,
    cluster_targets,
    collection_target,
    evaluation_targets,
    user_targets,
)

if TYPE_CHECKING:
    from insight_assets.core.storage.stores import Warehouse

    from ...retrieval.citing import Source


def first_chunks(sources: dict[str, Source]) -> dict[str, str]:
    """Each paper's first chunk (where its abstract is), by doc id."""
    found: dict[str, str] = {}
    for source in sources.values():
        found.setdefault(source.doc_id, source.chunk_id)
    return found


def load_papers(
    warehouse: Warehouse, collection: str, fallback_tokens: int = ABSTRACT_FALLBACK_TOKENS
) -> list[PaperInput]:
    return [
        paper_input(doc.doc_id, doc.title or doc.file, doc.abstract, doc.readable(), fallback_tokens)
        for doc in load_documents(warehouse, collection)
    ]


def _cluster_inputs(warehouse: Warehouse, collection: str) -> tuple[dict[int, str], dict[int, Counter[str]]]:
    clusters = {
        row["cluster"]: row["label"]
        for row in warehouse.rows(
            "SELECT cluster, label FROM theme_clusters WHERE collection = ? ORDER BY size DESC, cluster",
            [collection],
        )
    }
    counts: dict[int, Counter[str]] = {}
    for row in warehouse.rows(
        """SELECT a.cluster, c.doc_id, count(*) AS chunks FROM theme_assignments a
           JOIN chunks c ON c.collection = a.collection AND c.chunk_id = a.chunk_id
           WHERE a.collection = ? GROUP BY ALL""",
        [collection],
    ):
        counts.setdefault(row["cluster"], Counter())[row["doc_id"]] = row["chunks"]
    return clusters, counts


def build_targets(
    warehouse: Warehouse,
    collection: str,
    folder: Path,
    searchable: set[str],
    *,
    max_papers: int,
    min_cited: int,
    max_targets: int | None = None,
) -> tuple[list[SummaryTarget], list[LineProblem]]:
    """Every target of the collection (cluster, collection, user, evaluation), holding only papers
    that have chunks to retrieve (``searchable``); a target left with none is dropped, a user's
    line naming such papers is reported. Targets with the same papers and topic are kept once; the
    first ``max_targets`` of them (all when unset) are summarised."""
    titles = paper_titles(warehouse, collection)
    clusters, counts = _cluster_inputs(warehouse, collection)
    searchable_counts = {
        cluster: Counter({doc: n for doc, n in docs.items() if doc in searchable})
        for cluster, docs in counts.items()
    }
    users, problems = user_targets(folder / USER_TARGETS_FILE, titles, max_papers, searchable)
    found = [
        *cluster_targets(clusters, searchable_counts, max_papers),
        *collection_target(collection, sorted(searchable), list(clusters.values()), max_papers),
        *users,
        *evaluation_targets(citing_papers(warehouse, collection), min_cited),
    ]
    kept: dict[str, SummaryTarget] = {}
    for target in found:
        doc_ids = tuple(doc for doc in target.doc_ids if doc in searchable)
        if doc_ids and target.target_id not in kept:
            kept[target.target_id] = SummaryTarget(**{**target.__dict__, "doc_ids": doc_ids})
    return list(kept.values())[:max_targets], problems


def why_no_evaluation_targets(citations: list[tuple[str, str]], min_cited: int) -> str:
    """Why ``build_targets`` made no evaluation target."""
    return missing_links(citations, "An evaluation target") or (
        f"no paper's related-work section cites {min_cited} or more papers of the collection "
        "(min_cited_for_evaluation)."
    )
