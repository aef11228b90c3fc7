"""The build the local-model tests share: a collection of two demo papers built by a real language
model, provider ``local`` with the bundled SmolLM2-135M (no fake, no key, no network), with
``SMOKE_SETTINGS``; and what every such build must hold to.

The methods are built in two halves, one test file each (``test_local_model*.py``), so that two
pytest-xdist workers share the model's minutes: the curation chain (compressed documents, questions
and answers, and the methods that read them: InsightGen, Insight-RAG, ConTReGen) and the summaries
and ideas (XSum, SciPIP), which read the papers alone. The collection's page, which only gathers what
the others wrote (it asks no model with these settings), is built by the offline tests."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import dagster as dg

from insight_assets.app.commands import failure_reasons
from insight_assets.core.curation import USER_QUESTIONS_FILE
from insight_assets.core.llm import get_task
from insight_assets.core.llm.cache import DEFAULT_CACHE_FILE
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource
from insight_assets.defs.runs import SMOKE_CONTEXT_TOKENS, SMOKE_SETTINGS
from insight_assets_tests.conftest import DEMO_COLLECTION, add_collection
from insight_assets_tests.defs.helpers import assets_up_to, materialize_collection

COLLECTION = "two"
MODEL = "local/SmolLM2-135M-Instruct.Q4_1"
PAPERS = [
    DEMO_COLLECTION / "N18-3011_literature-graph-semantic-scholar.pdf",
    DEMO_COLLECTION / "2020.acl-main.207_specter.pdf",
]


# Each half with what it reads (ingestion in both: seconds with the hashing embedder; the theme graph
# XSum's targets are drawn from: no model).
SUMMARIES_AND_IDEAS = assets_up_to("xsum_scores", "scipip_scores")
CURATION_CHAIN = assets_up_to(
    "method_report", "judge_scores", "insight_rag_scores", "insight_retriever_accuracy", "contregen_scores"
)


def build_with_local_model(
    instance: dg.DagsterInstance,
    storage: StorageResource,
    embedder: EmbedderResource,
    data: Path,
    assets: list,
    questions: list[dict] | None = None,
) -> dg.ExecuteInProcessResult:
    """``assets`` of the two papers built by the bundled model (``questions``: the user's own, as
    ``questions.jsonl`` lines); every step must succeed and every asset be built."""
    folder = add_collection(storage, COLLECTION, PAPERS)
    if questions:
        (folder / USER_QUESTIONS_FILE).write_text("".join(json.dumps(q) + "\n" for q in questions))
    names = {key.to_user_string() for asset in assets for key in asset.keys}
    settings = {name: {"config": values} for name, values in SMOKE_SETTINGS.items() if name in names}
    result = materialize_collection(
        instance,
        storage,
        embedder,
        COLLECTION,
        llm=LLMResource(provider="local", context_tokens=SMOKE_CONTEXT_TOKENS, data_dir=str(data)),
        assets=assets,
        run_config={"ops": settings},
        raise_on_error=False,
    )
    assert result.success, f"failed steps: {failure_reasons(result)}"
    built = {event.asset_key.to_user_string() for event in result.get_asset_materialization_events()}
    assert built == names
    return result


def assert_answers_hold_to_their_schemas(data: Path) -> None:
    """The model answered, every cached answer validates against its task's schema, and names the model."""
    with sqlite3.connect(data / DEFAULT_CACHE_FILE) as connection:
        cached = connection.execute("SELECT task, provider, model, value_json FROM responses").fetchall()
    assert cached, "the model answered nothing that held to its task's schema"
    for task, provider, model, value_json in cached:
        assert (provider, model) == ("local", "SmolLM2-135M-Instruct.Q4_1")
        get_task(task).output_model.model_validate(json.loads(value_json))


def writers(storage: StorageResource, table: str) -> set[str]:
    return {
        row["writer"]
        for row in storage.warehouse.rows(f"SELECT writer FROM {table} WHERE collection = ?", [COLLECTION])
    }
