"""InsightGen's warehouse tables: each question's runs and intent, the insights, and the judge's
scores (the theme graph it reads is shared: ``core/themes/clustering.py``).

Declared here, where the method reads them back, and added to the warehouse when the method is
imported (``stores.declare_tables``). The theme index, read back for context selection, raises
``IndexMissing`` before the collection has a theme graph.
"""

from __future__ import annotations

from insight_assets.core.retrieval.index import CollectionIndex, IndexMissing, load_index
from insight_assets.core.storage.stores import VectorStore, Warehouse, declare_tables
from insight_assets.core.themes.clustering import ThemeGraph

from .baseline_documents import BaselineDocuments, from_rows
from .selection import ClusterIndex

TABLES = {
    "insight_runs": """
        collection VARCHAR, question_id VARCHAR, method VARCHAR, status VARCHAR, error VARCHAR,
        chunk_ids VARCHAR[], context_tokens INTEGER, truncated BOOLEAN, answer_clusters INTEGER[],
        related_clusters INTEGER[], retrieval_calls DOUBLE, retrieval_seconds DOUBLE""",
    "insight_pools": """
        collection VARCHAR, question_id VARCHAR, pair_digest VARCHAR, insightgen_chunk_ids VARCHAR[],
        doc_ids VARCHAR[]""",
    "insight_intents": """
        collection VARCHAR, question_id VARCHAR, intent VARCHAR, persona VARCHAR, goals VARCHAR[]""",
    "insights": """
        collection VARCHAR, question_id VARCHAR, method VARCHAR, insight_index INTEGER, type VARCHAR,
        hook VARCHAR, body VARCHAR, realization VARCHAR, justification VARCHAR, chunk_ids VARCHAR[],
        relevance INTEGER, novelty INTEGER, usefulness INTEGER, intent_alignment INTEGER,
        writer VARCHAR""",
    "judge_scores": """
        collection VARCHAR, judge VARCHAR, level VARCHAR, question_id VARCHAR, method VARCHAR,
        repetition INTEGER, label VARCHAR, insight_index INTEGER, novelty DOUBLE, diversity DOUBLE,
        relevance DOUBLE, depth DOUBLE, overall DOUBLE, rationale VARCHAR, panel VARCHAR""",
}
declare_tables(TABLES)


def load_theme_graph(warehouse: Warehouse, collection: str) -> ThemeGraph:
    with warehouse.session() as db:
        tables = [
            db.query(f"SELECT * FROM {name} WHERE collection = ?", [collection])
            for name in ("theme_clusters", "theme_edges", "theme_assignments")
        ]
    if not tables[0].num_rows:
        raise IndexMissing("no theme graph; materialize `theme_graph` first")
    return ThemeGraph.from_tables(*tables)


def load_theme_index(
    warehouse: Warehouse, vectors: VectorStore, collection: str, variant: str, profile: str
) -> tuple[CollectionIndex, ClusterIndex]:
    """The collection's index of ``profile`` (the one its theme graph clusters) and the theme graph
    prepared for context selection."""
    index = load_index(warehouse, vectors, collection, variant, profile)
    graph = load_theme_graph(warehouse, collection)
    try:
        return index, ClusterIndex(
            graph, {c.chunk_id: c.text for c in index.chunks}, {c.chunk_id: c.tokens for c in index.chunks}
        )
    except KeyError as error:  # chunks changed since the graph was built
        raise IndexMissing(str(error.args[0])) from error


def insights_with_contexts(warehouse: Warehouse, collection: str) -> list[dict]:
    """Every stored insight (``method``, ``question_id``, ``hook``, ``chunk_ids``) with the chunks
    its method was given for that question (``given``: the run's context; empty without a run)."""
    return warehouse.rows(
        """SELECT i.method, i.question_id, i.hook, i.chunk_ids, coalesce(r.chunk_ids, []) AS given
           FROM insights i LEFT JOIN insight_runs r USING (collection, question_id, method)
           WHERE i.collection = ? ORDER BY i.question_id, i.method, i.insight_index""",
        [collection],
    )


def cited_outside_context(rows: list[dict]) -> list[str]:
    """The insights of ``rows`` (``insights_with_contexts``) that cite a chunk their method was not
    given, each as "method / question: hook"."""
    return [
        f"{row['method']} / {row['question_id']}: {row['hook']}"
        for row in rows
        if not row["chunk_ids"] or not set(row["chunk_ids"]) <= set(row["given"])
    ]


def judging_inputs(warehouse: Warehouse, collection: str) -> tuple[list[dict], list[dict]]:
    """What the judge reads: every insight (question, method, hook, body) in its method's order,
    and every method's run per question (its status and error)."""
    with warehouse.session() as db:
        insights = db.rows(
            """SELECT question_id, method, hook, body FROM insights WHERE collection = ?
               ORDER BY question_id, method, insight_index""",
            [collection],
        )
        runs = db.rows(
            "SELECT question_id, method, status, error FROM insight_runs WHERE collection = ?", [collection]
        )
    return insights, runs


def baseline_documents(warehouse: Warehouse, collection: str) -> dict[str, BaselineDocuments]:
    """The documents each question's baselines read at the last build (none before the first)."""
    return from_rows(warehouse.rows("SELECT * FROM insight_pools WHERE collection = ?", [collection]))


def load_judge_scores(warehouse: Warehouse, collection: str) -> list[dict]:
    return warehouse.rows("SELECT * FROM judge_scores WHERE collection = ?", [collection])


def report_examples(warehouse: Warehouse, collection: str, questions: int = 3) -> list[dict]:
    """Each method's first insight for the first ``questions`` questions that have insights, beside
    the question and its answer."""
    return warehouse.rows(
        """WITH firsts AS (SELECT question_id, method, hook, body FROM insights
                           WHERE collection = ? AND insight_index = 0)
           SELECT a.question_id, a.question, a.answer, f.method, f.hook, f.body
           FROM generated_answers a JOIN firsts f USING (question_id)
           WHERE a.collection = ? AND a.question_id IN (
               SELECT DISTINCT question_id FROM firsts ORDER BY question_id LIMIT ?)
           ORDER BY a.position, f.method""",
        [collection, collection, questions],
    )


def method_costs(warehouse: Warehouse, collection: str) -> list[dict]:
    """Per method: questions run and the mean context tokens, retrieval calls and seconds."""
    return warehouse.rows(
        """SELECT method, count(*) AS questions, round(avg(context_tokens), 1) AS context_tokens,
                  round(avg(retrieval_calls), 2) AS retrieval_calls,
                  round(avg(retrieval_seconds), 3) AS retrieval_seconds
           FROM insight_runs WHERE collection = ? GROUP BY method ORDER BY method""",
        [collection],
    )
