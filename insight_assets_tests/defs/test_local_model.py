"""The curation chain built by a real language model (see ``local_model.py``): compressed documents,
questions and answers, and the methods that read them (InsightGen, Insight-RAG, ConTReGen), on two
demo papers with small settings.

A 135M model writes fluent but often wrong text, and fails many of the tasks' checks; what this
proves is the path: every method's prompts, schemas, repairs and context budgets run through a
generative model, every asset succeeds (failed items are recorded, not fatal), every cached answer
holds to its task's schema, and the rows name the model that wrote them. The collection carries two
questions of the user's, so the steps after the answers never depend on the model's luck with
question generation."""

from __future__ import annotations

import pytest

from insight_assets_tests.defs.helpers import check
from insight_assets_tests.defs.local_model import (
    COLLECTION,
    CURATION_CHAIN,
    MODEL,
    assert_answers_hold_to_their_schemas,
    build_with_local_model,
    writers,
)

pytestmark = pytest.mark.local_model

# The user's own questions: one with the user's answer, so that the steps after the answers always
# have a question-answer pair to work on, whatever the 135M model makes of question generation (its
# refinement can fail twice for the only combination, leaving no generated question); one for the
# model to answer.
USER_QUESTIONS = [
    {
        "question": "How do citation links between papers help learn document representations?",
        "answer": "Papers that cite each other are related, so their embeddings are trained to lie close.",
    },
    {"question": "What does a literature graph connect?"},
]


def test_the_curation_chain_builds_with_the_bundled_local_model(
    instance, storage, hashing_embedder, tmp_path
):
    data = tmp_path / "data"
    result = build_with_local_model(
        instance, storage, hashing_embedder, data, CURATION_CHAIN, questions=USER_QUESTIONS
    )
    assert_answers_hold_to_their_schemas(data)

    # An asset whose inputs the model left empty (every curated answer refused by its checks, say)
    # builds with zero rows, and its warning check says why.
    empty_means_warning = {
        "knowledge_triples": "triples_found",
        "insight_rag_benchmark": "benchmark_has_items",
    }
    for table, check_name in empty_means_warning.items():
        said = check(result, check_name)
        found = storage.warehouse.rows(f"SELECT 1 FROM {table} WHERE collection = ?", [COLLECTION])
        assert said.passed == bool(found)
        assert said.passed or said.description
    # The user's answered question is always a pair to find insights for; every method's run is on
    # record, with its insights or with why it has none (a 135M model often fails the insight schema).
    assert check(result, "questions_to_find_insights_for").passed
    runs = storage.warehouse.rows(
        "SELECT method, status, error FROM insight_runs WHERE collection = ?", [COLLECTION]
    )
    assert runs and all(run["status"] == "ok" or run["error"] for run in runs)

    assert writers(storage, "compressed_documents") == {MODEL}
