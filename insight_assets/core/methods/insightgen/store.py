"""InsightGen's warehouse tables: each question's runs and intent, the insights, and the judge's
scores (the theme graph it reads is shared: ``core/clustering.py``).

Declared here, where the method reads them back, and added to the warehouse when the method is
imported (``stores.declare_tables``).
"""

from insight_assets.core.stores import declare_tables

TABLES = {
    "insight_runs": """
        collection VARCHAR, question_id VARCHAR, method VARCHAR, status VARCHAR, error VARCHAR,
        chunk_ids VARCHAR[], context_tokens INTEGER, truncated BOOLEAN, answer_clusters INTEGER[],
        related_clusters INTEGER[]""",
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
        relevance DOUBLE, depth DOUBLE, overall DOUBLE, rationale VARCHAR""",
}
declare_tables(TABLES)
