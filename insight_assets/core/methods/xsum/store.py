"""XSum's warehouse tables: targets, questions per paper, answers, summaries and their scores.

Declared here, where the method reads them back, and added to the warehouse when the method is
imported (``stores.declare_tables``).
"""

from __future__ import annotations

from insight_assets.core.storage.stores import Warehouse, declare_tables

from .schemas import SummaryRecord, SummaryTarget, XSumAnswerRecord, XSumQuestion

TABLES = {
    "xsum_targets": """
        collection VARCHAR, target_id VARCHAR, kind VARCHAR, topic VARCHAR, doc_ids VARCHAR[],
        reference VARCHAR, reference_doc_id VARCHAR, reference_section VARCHAR""",
    "xsum_target_problems": """
        collection VARCHAR, line INTEGER, message VARCHAR""",
    "xsum_questions": """
        collection VARCHAR, doc_id VARCHAR, question_id VARCHAR, position INTEGER, question VARCHAR,
        abstract_source VARCHAR, status VARCHAR, error VARCHAR, writer VARCHAR""",
    "xsum_answers": """
        collection VARCHAR, target_id VARCHAR, question_id VARCHAR, doc_id VARCHAR, status VARCHAR,
        answer VARCHAR, cited_chunk_ids VARCHAR[], passage_chunk_ids VARCHAR[],
        scope_doc_ids VARCHAR[], error VARCHAR, writer VARCHAR""",
    "xsum_summaries": """
        collection VARCHAR, target_id VARCHAR, method VARCHAR, status VARCHAR, summary VARCHAR,
        rendered VARCHAR, cited_chunk_ids VARCHAR[], dropped_chunk_ids VARCHAR[],
        finish_reason VARCHAR, answers_used INTEGER, error VARCHAR, writer VARCHAR, calls DOUBLE,
        input_tokens DOUBLE, output_tokens DOUBLE, seconds DOUBLE""",
    "xsum_scores": """
        collection VARCHAR, target_id VARCHAR, method VARCHAR, reference_kind VARCHAR,
        rouge1 DOUBLE, rouge2 DOUBLE, rougeL DOUBLE, ref_precision DOUBLE, ref_recall DOUBLE,
        ref_f1 DOUBLE, semantic_recall DOUBLE, geval_coverage DOUBLE, checkeval DOUBLE,
        judge VARCHAR, errors VARCHAR[]""",
}
declare_tables(TABLES)


def load_targets(warehouse: Warehouse, collection: str) -> list[SummaryTarget]:
    return [
        SummaryTarget(
            row["target_id"],
            row["kind"],
            row["topic"],
            tuple(row["doc_ids"]),
            row["reference"] or "",
            row["reference_doc_id"],
            row["reference_section"] or "",
        )
        for row in warehouse.rows(
            "SELECT * FROM xsum_targets WHERE collection = ? ORDER BY kind, topic", [collection]
        )
    ]


def load_questions(warehouse: Warehouse, collection: str) -> list[XSumQuestion]:
    """The questions asked, per paper in order (failed papers left out)."""
    return [
        XSumQuestion(row["question_id"], row["doc_id"], row["position"], row["question"])
        for row in warehouse.rows(
            "SELECT * FROM xsum_questions WHERE collection = ? AND status = 'ok' ORDER BY doc_id, position",
            [collection],
        )
    ]


def load_answers(warehouse: Warehouse, collection: str) -> list[XSumAnswerRecord]:
    return [
        XSumAnswerRecord(
            row["target_id"],
            row["question_id"],
            row["doc_id"],
            row["status"],
            row["answer"] or "",
            tuple(row["cited_chunk_ids"]),
        )
        for row in warehouse.rows("SELECT * FROM xsum_answers WHERE collection = ?", [collection])
    ]


def load_written_summaries(warehouse: Warehouse, collection: str) -> list[SummaryRecord]:
    """Every method's summaries that have a text (failed ones left out)."""
    return [
        SummaryRecord(
            row["target_id"],
            row["method"],
            row["status"],
            row["summary"] or "",
            row["rendered"] or "",
            tuple(row["cited_chunk_ids"]),
        )
        for row in warehouse.rows(
            "SELECT * FROM xsum_summaries WHERE collection = ? AND summary IS NOT NULL", [collection]
        )
    ]


def summary_costs(warehouse: Warehouse, collection: str) -> list[dict]:
    """Each method's cost per target (calls, tokens, seconds), as its summaries recorded it."""
    return warehouse.rows(
        "SELECT DISTINCT method, calls, input_tokens, output_tokens, seconds FROM xsum_summaries "
        "WHERE collection = ? AND calls IS NOT NULL",
        [collection],
    )


def rendered_summaries(warehouse: Warehouse, collection: str, method: str) -> list[dict]:
    """``method``'s written summaries with their target's kind and topic, by kind then topic."""
    return warehouse.rows(
        """SELECT t.kind, t.topic, s.rendered, s.status FROM xsum_summaries s
           JOIN xsum_targets t USING (collection, target_id)
           WHERE s.collection = ? AND s.method = ? AND s.rendered IS NOT NULL ORDER BY t.kind, t.topic""",
        [collection, method],
    )
