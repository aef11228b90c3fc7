"""ConTReGen's warehouse tables: one row per tree node, the answers of it and its baselines,
each kept node's synthesis, and the scores.

Declared here, where the method reads them back, and added to the warehouse when the method is
imported (``stores.declare_tables``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from insight_assets.core.storage.stores import Warehouse, declare_tables

from . import records

if TYPE_CHECKING:
    from ...retrieval.citing import Source
    from .schemas import Answer, Tree

TABLES = {
    "contregen_trees": """
        collection VARCHAR, question_id VARCHAR, query VARCHAR, question_source VARCHAR,
        gold_doc_ids VARCHAR[], node_id VARCHAR, parent_id VARCHAR, depth INTEGER,
        sub_question VARCHAR, search_query VARCHAR, status VARCHAR, reason VARCHAR,
        expansion VARCHAR, expansion_reason VARCHAR, passage_chunk_ids VARCHAR[],
        passage_doc_ids VARCHAR[], passage_scores DOUBLE[], passage_relevant BOOLEAN[],
        passage_reasons VARCHAR[], error VARCHAR, calls INTEGER, input_tokens BIGINT,
        output_tokens BIGINT, writer VARCHAR""",
    "contregen_answers": """
        collection VARCHAR, question_id VARCHAR, method VARCHAR, status VARCHAR, answer VARCHAR,
        rendered VARCHAR, cited_chunk_ids VARCHAR[], retrieved_chunk_ids VARCHAR[],
        used_chunk_ids VARCHAR[], calls INTEGER, input_tokens BIGINT, output_tokens BIGINT,
        finish_reason VARCHAR, error VARCHAR, writer VARCHAR, seconds DOUBLE""",
    "contregen_node_summaries": """
        collection VARCHAR, question_id VARCHAR, node_id VARCHAR, status VARCHAR, summary VARCHAR,
        error VARCHAR""",
    "contregen_scores": """
        collection VARCHAR, question_id VARCHAR, method VARCHAR, gold INTEGER, recall DOUBLE,
        recall_used DOUBLE, docs_retrieved INTEGER, passages_retrieved INTEGER, coverage DOUBLE,
        relevance DOUBLE, calls INTEGER, input_tokens BIGINT, output_tokens BIGINT, judge VARCHAR,
        errors VARCHAR[], facet_coverage DOUBLE, rouge_l DOUBLE, entailment DOUBLE,
        contradiction DOUBLE, seconds DOUBLE""",
}
declare_tables(TABLES)


def load_trees(warehouse: Warehouse, collection: str) -> list[Tree]:
    return records.trees_from_rows(
        warehouse.rows("SELECT * FROM contregen_trees WHERE collection = ?", [collection])
    )


def tree_sources(warehouse: Warehouse, collection: str) -> dict[str, Source]:
    """The passages the trees retrieved beyond the collection's own, as a build reads them back:
    none, since a build's answers read the collection's passages (``load_sources``) and nothing
    else is stored."""
    return {}


def load_answers(warehouse: Warehouse, collection: str) -> list[Answer]:
    """Every method's stored answers (ConTReGen's and its baselines')."""
    return records.answers_from_rows(
        warehouse.rows("SELECT * FROM contregen_answers WHERE collection = ?", [collection])
    )
