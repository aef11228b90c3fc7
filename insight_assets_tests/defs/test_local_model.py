"""Every asset of every group built by a real language model: provider ``local`` with the bundled
SmolLM2-135M (no fake, no key, no network), on two of the demo's papers with small settings.

A 135M model writes fluent but often wrong text, and fails many of the tasks' checks; what this
proves is the path: every method's prompts, schemas, repairs and context budgets run through a
generative model, every asset succeeds (failed items are recorded, not fatal), every cached answer
holds to its task's schema, and the rows name the model that wrote them. The collection carries two
questions of the user's, so the steps after the answers never depend on the model's luck with
question generation."""

from __future__ import annotations

import json
import sqlite3

import pytest

from insight_assets.core.curation import USER_QUESTIONS_FILE
from insight_assets.core.llm import get_task
from insight_assets.core.llm.cache import DEFAULT_CACHE_FILE
from insight_assets.defs.commands import failure_reasons
from insight_assets.defs.resources import LLMResource
from insight_assets.defs.runs import ALL_ASSETS, SMOKE_CONTEXT_TOKENS, SMOKE_SETTINGS
from insight_assets_tests.conftest import DEMO_COLLECTION, add_collection
from insight_assets_tests.defs.helpers import check, materialize_collection

pytestmark = pytest.mark.local_model

MODEL = "local/SmolLM2-135M-Instruct.Q4_1"
PAPERS = [
    DEMO_COLLECTION / "N18-3011_literature-graph-semantic-scholar.pdf",
    DEMO_COLLECTION / "2020.acl-main.207_specter.pdf",
]


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


def test_every_asset_builds_with_the_bundled_local_model(instance, storage, hashing_embedder, tmp_path):
    folder = add_collection(storage, "two", PAPERS)
    (folder / USER_QUESTIONS_FILE).write_text("".join(json.dumps(q) + "\n" for q in USER_QUESTIONS))
    data = tmp_path / "data"

    result = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "two",
        llm=LLMResource(provider="local", context_tokens=SMOKE_CONTEXT_TOKENS, data_dir=str(data)),
        run_config={"ops": {name: {"config": values} for name, values in SMOKE_SETTINGS.items()}},
        raise_on_error=False,
    )

    assert result.success, f"failed steps: {failure_reasons(result)}"
    built = {event.asset_key.to_user_string() for event in result.get_asset_materialization_events()}
    assert built == {key.to_user_string() for asset in ALL_ASSETS for key in asset.keys}

    with sqlite3.connect(data / DEFAULT_CACHE_FILE) as connection:
        cached = connection.execute("SELECT task, provider, model, value_json FROM responses").fetchall()
    assert cached, "the model answered nothing that held to its task's schema"
    for task, provider, model, value_json in cached:
        assert (provider, model) == ("local", "SmolLM2-135M-Instruct.Q4_1")
        get_task(task).output_model.model_validate(json.loads(value_json))

    def writers(table: str, column: str = "writer") -> set[str]:
        return {
            row[column]
            for row in storage.warehouse.rows(f"SELECT {column} FROM {table} WHERE collection = 'two'")
        }

    # An asset whose inputs the model left empty (every curated answer refused by its checks, say)
    # builds with zero rows, and its warning check says why.
    empty_means_warning = {
        "knowledge_triples": "triples_found",
        "insight_rag_benchmark": "benchmark_has_items",
    }
    for table, check_name in empty_means_warning.items():
        said = check(result, check_name)
        assert said.passed == bool(storage.warehouse.rows(f"SELECT 1 FROM {table} WHERE collection = 'two'"))
        assert said.passed or said.description
    # The user's answered question is always a pair to find insights for; every method's run is on
    # record, with its insights or with why it has none (a 135M model often fails the insight schema).
    assert check(result, "questions_to_find_insights_for").passed
    runs = storage.warehouse.rows("SELECT method, status, error FROM insight_runs WHERE collection = 'two'")
    assert runs and all(run["status"] == "ok" or run["error"] for run in runs)

    assert writers("compressed_documents") == {MODEL}
    assert writers("xsum_summaries") == {MODEL}
    assert writers("scipip_papers") == {MODEL}
