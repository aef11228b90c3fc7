"""SciPIP's warehouse tables: the literature database, its keyword graph, retrievals, recall,
ideas and their scores (the summaries' vectors are in LanceDB, see ``vectors``).

Declared here, where the method reads them back, and added to the warehouse when the method is
imported (``stores.declare_tables``). A reader that finds nothing to read raises ``IndexMissing``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from insight_assets.core.retrieval.index import IndexMissing, read_vectors
from insight_assets.core.startup.lazy import np, pa
from insight_assets.core.storage.stores import VectorStore, Warehouse, declare_tables

from ...citations import citation_links
from .calibration import Calibration, calibrate
from .evaluation import Query, RecallRow
from .keywords import KeywordGraph, KeywordSpace
from .retrieval import Library
from .schemas import BACKGROUND, IDEA_METHODS, SUMMARY

if TYPE_CHECKING:
    from .field import ResearchField
    from .ideas import IdeaRun

# The LanceDB tables of the papers' background and summary vectors, one per collection.
VECTOR_KIND = "scipip_index"

TABLES = {
    "scipip_papers": """
        collection VARCHAR, doc_id VARCHAR, title VARCHAR, keywords VARCHAR[], summary VARCHAR,
        background VARCHAR, ideas VARCHAR, method VARCHAR, cited_doc_ids VARCHAR[], status VARCHAR,
        error VARCHAR, introduction_span INTEGER[], method_span INTEGER[], writer VARCHAR""",
    "scipip_keyword_edges": """collection VARCHAR, doc_id VARCHAR, keyword VARCHAR""",
    "scipip_keyword_pairs": """collection VARCHAR, keyword_a VARCHAR, keyword_b VARCHAR, papers INTEGER""",
    "scipip_retrievals": """
        collection VARCHAR, query_id VARCHAR, background VARCHAR, entities VARCHAR[], position INTEGER,
        doc_id VARCHAR, routes VARCHAR[], similarity DOUBLE, cluster INTEGER, selected BOOLEAN""",
    # Every background asked about, with the entities its query searched by (none: the extraction
    # failed): the ideas are proposed for the same queries, without asking for them again.
    "scipip_queries": """collection VARCHAR, query_id VARCHAR, held_out VARCHAR, entities VARCHAR[]""",
    "scipip_recall": """
        collection VARCHAR, query_id VARCHAR, held_out VARCHAR, variant VARCHAR, relevant INTEGER,
        ranked VARCHAR[], hits BOOLEAN[], clusters INTEGER, candidates INTEGER, merged INTEGER""",
    "scipip_settings": """
        collection VARCHAR, top_k INTEGER, n_cocite INTEGER, tau DOUBLE, tau_source VARCHAR, n_papers INTEGER,
        neighbour_min_papers INTEGER, neighbour_keep INTEGER, keyword_filter VARCHAR, keyword_threshold DOUBLE,
        keyword_source VARCHAR, embedder VARCHAR""",
    "scipip_idea_runs": """
        collection VARCHAR, query_id VARCHAR, background VARCHAR, held_out VARCHAR, transformed VARCHAR,
        entities VARCHAR[], brainstorm_keywords VARCHAR[], retrieved_doc_ids VARCHAR[],
        inspiring_doc_ids VARCHAR[], errors VARCHAR[], field VARCHAR, field_source VARCHAR,
        example_title VARCHAR, scientist_checks VARCHAR[]""",
    "scipip_ideas": """
        collection VARCHAR, query_id VARCHAR, method VARCHAR, position INTEGER, title VARCHAR, idea VARCHAR,
        inspired_by VARCHAR[], problem VARCHAR, detailed_method VARCHAR, expected_outcome VARCHAR,
        writer VARCHAR""",
    "scipip_scores": """
        collection VARCHAR, query_id VARCHAR, method VARCHAR, position INTEGER, shown_as INTEGER,
        title VARCHAR, novelty INTEGER, clarity INTEGER, feasibility INTEGER, relevance INTEGER,
        helpful BOOLEAN, rationale VARCHAR, error VARCHAR, judge VARCHAR, form VARCHAR""",
    "scipip_pairs": """
        collection VARCHAR, query_id VARCHAR, baseline VARCHAR, position INTEGER, criterion VARCHAR,
        scipip_first VARCHAR, scipip_second VARCHAR, outcome VARCHAR, judge VARCHAR, error VARCHAR""",
}
declare_tables(TABLES)


def summary_vectors(lancedb_uri: str) -> VectorStore:
    """The papers' background and summary vectors (written by ``paper_summaries``)."""
    return VectorStore(lancedb_uri, kind=VECTOR_KIND)


def load_library(warehouse: Warehouse, lancedb_uri: str, embedder, collection: str) -> Library:
    """The summarized papers with their vectors, keyword graph and citations. Raises
    ``IndexMissing`` when no summary has vectors of this embedder."""
    rows = warehouse.rows(
        "SELECT doc_id, keywords, background FROM scipip_papers WHERE collection = ? AND status = 'ok' ORDER BY doc_id",
        [collection],
    )
    found = {
        profile: read_vectors(summary_vectors(lancedb_uri), collection, profile, embedder.variant)
        for profile in (BACKGROUND, SUMMARY)
    }
    rows = [row for row in rows if all(row["doc_id"] in found[p] for p in found)]
    if not rows:
        raise IndexMissing(
            f"no summarized paper with vectors of embedder {embedder.variant!r}: materialize `paper_summaries`."
        )
    return library_of(warehouse, embedder, collection, rows, found)


def library_of(
    warehouse: Warehouse, embedder, collection: str, rows: Sequence[dict], vectors: dict[str, dict]
) -> Library:
    """The library of the summarized papers ``rows`` (doc_id, keywords, background; none missing
    from ``vectors``: each profile's unit vectors by doc_id), with their keyword graph and the
    collection's citations among them."""
    docs = tuple(row["doc_id"] for row in rows)
    return Library(
        doc_ids=docs,
        backgrounds={row["doc_id"]: row["background"] for row in rows},
        background_vectors=np.stack([vectors[BACKGROUND][doc] for doc in docs]),
        summary_vectors=np.stack([vectors[SUMMARY][doc] for doc in docs]),
        graph=KeywordGraph.build(
            {row["doc_id"]: row["keywords"] for row in rows},
            KeywordSpace(embedder.embed, calibrated(embedder, "keywords").threshold),
        ),
        citations=tuple(pair for pair in citation_links(warehouse, collection) if set(pair) <= set(docs)),
        tau=calibrated(embedder, "summaries"),
    )


_CALIBRATIONS: dict[tuple[str, str], Calibration] = {}


def calibrated(embedder, kind: str) -> Calibration:
    """``calibrate`` once per embedder variant and kind in this process (it embeds ~80 texts)."""
    key = (embedder.variant, kind)
    if key not in _CALIBRATIONS:
        _CALIBRATIONS[key] = calibrate(embedder.embed, kind)
    return _CALIBRATIONS[key]


def load_recall(warehouse: Warehouse, collection: str) -> list[RecallRow]:
    fields = RecallRow.__dataclass_fields__
    return [
        RecallRow(**{k: tuple(v) if isinstance(v, list) else v for k, v in row.items() if k in fields})
        for row in warehouse.rows("SELECT * FROM scipip_recall WHERE collection = ?", [collection])
    ]


def load_papers(warehouse: Warehouse, collection: str) -> list[dict]:
    """The summarized papers' ``doc_id``, ``title`` and ``method``."""
    return warehouse.rows(
        "SELECT doc_id, title, method FROM scipip_papers WHERE collection = ? AND status = 'ok'", [collection]
    )


def paper_keywords(warehouse: Warehouse, collection: str) -> dict[str, list[str]]:
    """Each summarized paper's keywords, by doc id."""
    rows = warehouse.rows(
        "SELECT doc_id, keywords FROM scipip_papers WHERE collection = ? AND status = 'ok'", [collection]
    )
    return {row["doc_id"]: row["keywords"] for row in rows}


def paper_texts(warehouse: Warehouse, collection: str) -> dict[str, str]:
    """Each paper's summary and method as one text, by doc id: what an idea is compared with."""
    rows = warehouse.rows(
        "SELECT doc_id, summary, method FROM scipip_papers WHERE collection = ?", [collection]
    )
    return {row["doc_id"]: f"{row['summary']} {row['method']}" for row in rows}


def built_field(warehouse: Warehouse, collection: str) -> str | None:
    """The research field the collection's ideas were proposed in (``None`` before any)."""
    rows = warehouse.rows(
        "SELECT field FROM scipip_idea_runs WHERE collection = ? AND field IS NOT NULL LIMIT 1", [collection]
    )
    return rows[0]["field"] if rows else None


def load_ideas(warehouse: Warehouse, collection: str) -> tuple[list[dict], dict[str, dict]]:
    """Every idea in background, method and position order, and each background's run by query id."""
    with warehouse.session() as db:
        ideas = db.rows(
            "SELECT * FROM scipip_ideas WHERE collection = ? ORDER BY query_id, method, position",
            [collection],
        )
        runs = db.rows("SELECT * FROM scipip_idea_runs WHERE collection = ?", [collection])
    return ideas, {row["query_id"]: row for row in runs}


def load_settings(warehouse: Warehouse, collection: str) -> list[dict]:
    """The retrieval settings the collection's index was built with (one row, or none before)."""
    return warehouse.rows("SELECT * FROM scipip_settings WHERE collection = ?", [collection])


def filter_merges(warehouse: Warehouse, collection: str, variant: str) -> list[dict]:
    """For each leave-one-out query of ``variant``: the clusters its filter made and the papers merged."""
    return warehouse.rows(
        "SELECT clusters, merged FROM scipip_recall WHERE collection = ? AND variant = ?",
        [collection, variant],
    )


def idea_tables(
    collection: str, runs: Sequence[IdeaRun], field: ResearchField, writer: str
) -> dict[str, pa.Table]:
    """The rows of ``scipip_idea_runs`` (one per background: its stages' results and errors) and
    ``scipip_ideas`` (one per idea and method, with its expansion where it has one)."""
    ideas = [
        {
            "collection": collection,
            "query_id": run.query.query_id,
            "method": method,
            "position": position,
            "title": idea.title,
            "idea": idea.idea,
            "inspired_by": list(idea.inspired_by),
            **_expansion(run, method, position),
            "writer": writer,
        }
        for run in runs
        for method in IDEA_METHODS
        for position, idea in enumerate(run.ideas(method))
    ]
    backgrounds = [
        {
            "collection": collection,
            "query_id": run.query.query_id,
            "background": run.query.background,
            "held_out": run.query.held_out,
            "transformed": run.transformed,
            "entities": list(run.query.entities),
            "brainstorm_keywords": list(run.brainstorm_keywords),
            "retrieved_doc_ids": list(run.retrieval.selected),
            "inspiring_doc_ids": [i["doc_id"] for i in run.inspirations],
            "errors": run.errors,
            "field": field.name,
            "field_source": field.describe(),
            "example_title": run.example.get("example_title"),
            "scientist_checks": [
                f"{r.idea.title} ({r.rounds} reflections): {'novel' if r.novel else 'not novel'}. {r.reason}"
                for r in run.scientist
            ],
        }
        for run in runs
    ]
    return {
        "scipip_idea_runs": pa.Table.from_pylist(backgrounds),
        "scipip_ideas": pa.Table.from_pylist(ideas),
    }


def summary_vector_table(collection: str, usable: Sequence, vectors: np.ndarray, variant: str) -> pa.Table:
    """The rows of the summary index: each paper's background, then each paper's summary, with
    their unit ``vectors`` in that order."""
    profiles = [BACKGROUND] * len(usable) + [SUMMARY] * len(usable)
    return pa.table(
        {
            "collection": [collection] * len(profiles),
            "profile": profiles,
            "chunk_id": [s.doc_id for s in usable] * 2,
            "doc_id": [s.doc_id for s in usable] * 2,
            "text": [s.background for s in usable] + [s.summary for s in usable],
            "variant": [variant] * len(profiles),
            "vector": pa.array(
                [list(map(float, v)) for v in vectors], pa.list_(pa.float32(), vectors.shape[1])
            ),
        }
    )


def papers_table(collection: str, summaries: Sequence, parts: Sequence, writer: str) -> pa.Table:
    """``scipip_papers``: each paper's digest (or why it has none) with the spans it was read from."""
    spans = {part.doc_id: part for part in parts}
    return pa.Table.from_pylist(
        [
            {
                "collection": collection,
                **{k: list(v) if isinstance(v, tuple) else v for k, v in s.__dict__.items()},
                "introduction_span": list(spans[s.doc_id].introduction_span or []),
                "method_span": list(spans[s.doc_id].method_span or []),
                "writer": writer,
            }
            for s in summaries
        ]
    )


def retrieval_tables(
    collection: str,
    queries: Sequence[Query],
    retrievals: list[dict],
    recall: Sequence[RecallRow],
    settings: dict,
) -> dict[str, pa.Table]:
    """The queries, the user backgrounds' retrievals, the leave-one-out recall and the settings they used."""
    return {
        "scipip_queries": pa.Table.from_pylist(
            [
                {
                    "collection": collection,
                    "query_id": q.query_id,
                    "held_out": q.held_out,
                    "entities": list(q.entities),
                }
                for q in queries
            ],
            schema=pa.schema(
                [
                    ("collection", pa.string()),
                    ("query_id", pa.string()),
                    ("held_out", pa.string()),
                    ("entities", pa.list_(pa.string())),
                ]
            ),
        ),
        "scipip_retrievals": pa.Table.from_pylist(retrievals),
        "scipip_recall": pa.Table.from_pylist([{"collection": collection, **r.__dict__} for r in recall]),
        "scipip_settings": pa.Table.from_pylist([settings]),
    }


def query_entities(warehouse: Warehouse, collection: str) -> dict[str, tuple[str, ...]]:
    """The entities each background's query searched by, by query id (``scipip_retrievals``')."""
    rows = warehouse.rows("SELECT query_id, entities FROM scipip_queries WHERE collection = ?", [collection])
    return {row["query_id"]: tuple(row["entities"]) for row in rows}


def _expansion(run: IdeaRun, method: str, position: int) -> dict:
    detailed = run.expansion(method, position)
    return {
        "problem": detailed.problem if detailed else None,
        "detailed_method": detailed.method if detailed else None,
        "expected_outcome": detailed.expected_outcome if detailed else None,
    }


__all__ = ["TABLES", "VECTOR_KIND", "IndexMissing"]
