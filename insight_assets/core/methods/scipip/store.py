"""SciPIP's warehouse tables: the literature database, its keyword graph, retrievals, recall,
ideas and their scores (the summaries' vectors are in LanceDB, see ``vectors``).

Declared here, where the method reads them back, and added to the warehouse when the method is
imported (``stores.declare_tables``). A reader that finds nothing to read raises ``IndexMissing``.
"""

from __future__ import annotations

import numpy as np

from ...citations import citation_links
from ...index import IndexMissing, read_vectors
from ...stores import VectorStore, Warehouse, declare_tables
from .calibration import Calibration, calibrate
from .evaluation import RecallRow
from .keywords import KeywordGraph, KeywordSpace
from .retrieval import Library
from .schemas import BACKGROUND, SUMMARY

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
    docs = tuple(row["doc_id"] for row in rows)
    return Library(
        doc_ids=docs,
        backgrounds={row["doc_id"]: row["background"] for row in rows},
        background_vectors=np.stack([found[BACKGROUND][doc] for doc in docs]),
        summary_vectors=np.stack([found[SUMMARY][doc] for doc in docs]),
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


__all__ = ["TABLES", "VECTOR_KIND", "IndexMissing"]
