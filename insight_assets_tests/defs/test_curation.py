"""Materialize the SCOpE-QA curation assets: offline on the demo papers, and against a fake
hosted provider for the cache, the budget and the keys."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from insight_assets.core.curation import USER_QUESTIONS_FILE
from insight_assets.defs.catalog import asset_named
from insight_assets.defs.resources import LLMResource, StorageResource
from insight_assets_tests.conftest import DEMO_COLLECTION, add_collection
from insight_assets_tests.defs.helpers import (
    assets_up_to,
    check,
    hosted_llm,
    materialize_collection,
    metadata,
)
from insight_assets_tests.fake_model_server import Received, Reply
from insight_assets_tests.toy_model import first_prompt

DEMO_PDFS = sorted(DEMO_COLLECTION.glob("*.pdf"))
SECRET = "fake-KEY-0c4e8d21b9"


@pytest.fixture
def llm(tmp_path: Path) -> LLMResource:
    return LLMResource(data_dir=str(tmp_path / "data"))


def write_user_questions(folder: Path) -> None:
    lines = [
        json.dumps(
            {
                "question": "How do citation-informed document embeddings change what counts as a related paper?"
            }
        ),
        "{not json",
        json.dumps(
            {"question": "Which parts of a paper matter most for recommending it?", "answer": "Its abstract."}
        ),
        json.dumps({"answer": "an answer without a question"}),
    ]
    (folder / USER_QUESTIONS_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_demo_collection_gets_questions_and_cited_answers_offline(
    instance, storage, hashing_embedder, llm
):
    folder = add_collection(storage, "demo", DEMO_PDFS)
    write_user_questions(folder)
    result = materialize_collection(
        instance, storage, hashing_embedder, "demo", llm=llm, assets=assets_up_to("generated_answers")
    )

    compressed = metadata(result, "compressed_documents")
    assert compressed["dagster/row_count"] == 5
    assert 0 < compressed["compression_ratio"] < 0.5
    assert compressed["llm_provider"] == "offline (extractive)"
    assert compressed["llm_calls"] == 5 and compressed["llm_cost_usd"] == 0.0

    questions = metadata(result, "generated_questions")
    # Five papers: one 5-paper combination, so 4 of the 200 targeted questions (200 / 50 per combination).
    assert questions["combinations"] == 1 and questions["candidates"] == 10
    assert questions["target_questions"] == 4
    assert questions["user_questions"] == 2
    assert not check(result, "user_questions_readable").passed
    problems = storage.warehouse.rows(
        "SELECT line, message FROM user_question_problems WHERE collection = 'demo'"
    )
    assert [row["line"] for row in problems] == [2, 4]

    rows = storage.warehouse.rows(
        "SELECT question, doc_ids, source, user_answer FROM generated_questions WHERE collection = 'demo' ORDER BY position"
    )
    assert [row["source"] for row in rows[:2]] == ["user", "user"]
    doc_ids = {
        row["doc_id"]
        for row in storage.warehouse.rows("SELECT doc_id FROM parsed_documents WHERE collection = 'demo'")
    }
    for row in rows[2:]:
        assert row["source"] == "generated" and set(row["doc_ids"]) == doc_ids
        assert 15 <= len(row["question"].split()) <= 35

    answers = storage.warehouse.rows(
        "SELECT question, answer, cited_doc_ids, doc_ids, answer_source, status FROM generated_answers "
        "WHERE collection = 'demo' ORDER BY position"
    )
    assert len(answers) == len(rows)
    user_answered = next(row for row in answers if row["question"].startswith("Which parts"))
    assert user_answered["answer"] == "Its abstract." and user_answered["answer_source"] == "user"
    generated = [row for row in answers if row["answer_source"] != "user" and row["status"] == "kept"]
    assert generated and all(set(row["cited_doc_ids"]) <= set(row["doc_ids"]) for row in generated)
    assert all(row["cited_doc_ids"] for row in generated)
    assert check(result, "citations_name_combination_documents").passed
    assert check(result, "every_question_answered").passed


def _compression_reply(request: Received) -> Reply:
    """A hosted model's answer to any compression prompt: valid, and the same every time."""
    assert (
        "compress" in request.last_user_text().lower() or "contributions" in request.last_user_text().lower()
    )
    return Reply(
        json.dumps(
            {
                "main_topics": ["scientific document embeddings"],
                "contributions": ["A citation-informed transformer produces document-level embeddings."],
                "conclusions": ["Citation signals improve embeddings without task-specific fine-tuning."],
                "key_findings": ["The embeddings outperform baselines on a new benchmark of seven tasks."],
            }
        )
    )


@pytest.fixture
def ingested(instance, storage: StorageResource, hashing_embedder) -> StorageResource:
    add_collection(storage, "demo", DEMO_PDFS[:2])
    materialize_collection(instance, storage, hashing_embedder, "demo")
    return storage


def test_a_hosted_rerun_of_an_unchanged_partition_makes_no_provider_call(
    instance, ingested, hashing_embedder, server, tmp_path
):
    server.responder = _compression_reply
    llm = hosted_llm(server, tmp_path, api_key=SECRET)

    def compress(run_config=None):
        return materialize_collection(
            instance,
            ingested,
            hashing_embedder,
            "demo",
            llm=llm,
            assets=[asset_named("compressed_documents")],
            run_config=run_config,
        )

    first = compress()
    assert metadata(first, "compressed_documents")["llm_provider_calls"] == 2
    assert len(server.requests) == 2

    # Nothing changed: the step reuses its build and asks nothing, not even the cache.
    again = compress()
    reported = metadata(again, "compressed_documents")
    assert len(server.requests) == 2 and reported["build"].startswith("reused")
    assert reported["llm_calls"] == 0 and reported["llm_cost_usd"] == 0.0
    assert reported["dagster/row_count"] == metadata(first, "compressed_documents")["dagster/row_count"]

    # A config the prompts do not depend on runs the step again: every answer from the cache.
    rerun = compress({"ops": {"compressed_documents": {"config": {"max_concurrency": 1}}}})
    reported = metadata(rerun, "compressed_documents")
    assert len(server.requests) == 2 and reported["build"] == "built: config changed"
    assert reported["llm_provider_calls"] == 0 and reported["llm_cache_hits"] == 2
    assert reported["llm_cost_usd"] == 0.0 and metadata(first, "compressed_documents")["llm_cost_usd"] > 0

    # The key went to the server, and nowhere else: not metadata, not the cache, not the ledger.
    assert all(
        {name.lower(): value for name, value in request.headers.items()}["authorization"]
        == f"Bearer {SECRET}"
        for request in server.requests
    )
    stored = b"".join(path.read_bytes() for path in (tmp_path / "data").rglob("*") if path.is_file())
    assert SECRET.encode() not in stored
    assert SECRET not in json.dumps({k: str(v) for k, v in reported.items()})


def test_an_answer_that_failed_for_good_is_not_bought_again_unless_asked(
    instance, ingested, hashing_embedder, server, tmp_path
):
    """A paper whose compression comes back invalid twice (answer and repair) is recorded: the
    unchanged rebuild reuses the step without a request, and only --retry-failed asks again."""
    refused_title = None

    def reply(request: Received) -> Reply:
        nonlocal refused_title
        prompt = first_prompt(request)
        title = prompt.split("Title: ", 1)[1].split("\n", 1)[0]
        refused_title = refused_title or title
        return Reply("no json at all") if title == refused_title else _compression_reply(request)

    server.responder = reply

    def compress(**changes):
        return materialize_collection(
            instance,
            ingested,
            hashing_embedder,
            "demo",
            llm=hosted_llm(server, tmp_path, api_key=SECRET, **changes),
            assets=[asset_named("compressed_documents")],
        )

    built = metadata(compress(), "compressed_documents")
    assert (built["llm_failed_items"], built["llm_failures_to_retry"]) == (1, 0)
    assert len(server.requests) == 3  # one answer, and one answer and its repair for the refused paper

    again = metadata(compress(), "compressed_documents")
    assert again["build"].startswith("reused") and len(server.requests) == 3

    retried = metadata(compress(retry_failed=True), "compressed_documents")
    assert retried["build"] == "built: asked to retry its 1 failed model call(s)"
    assert retried["llm_provider_calls"] == 2 and retried["llm_cache_hits"] == 1
    assert len(server.requests) == 5


def test_the_run_budget_stops_before_a_call_would_pass_it(
    instance, ingested, hashing_embedder, server, tmp_path
):
    server.responder = _compression_reply
    llm = hosted_llm(server, tmp_path, api_key=SECRET, budget_usd=0.000001)
    result = materialize_collection(
        instance,
        ingested,
        hashing_embedder,
        "demo",
        llm=llm,
        assets=[asset_named("compressed_documents")],
        raise_on_error=False,
    )
    assert not result.success
    assert server.requests == []
    (failure,) = [
        event for event in result.all_events if event.event_type == dg.DagsterEventType.STEP_FAILURE
    ]
    message = failure.step_failure_data.user_failure_data.description
    assert "budget" in message and "higher budget_usd" in message


def test_a_refused_key_fails_the_step_with_what_to_fix(
    instance, ingested, hashing_embedder, server, tmp_path
):
    from insight_assets_tests.fake_model_server import Failure

    server.default = Failure(401, "Incorrect API key provided")
    result = materialize_collection(
        instance,
        ingested,
        hashing_embedder,
        "demo",
        llm=hosted_llm(server, tmp_path, api_key=SECRET),
        assets=[asset_named("compressed_documents")],
        raise_on_error=False,
    )
    assert not result.success
    (failure,) = [
        event for event in result.all_events if event.event_type == dg.DagsterEventType.STEP_FAILURE
    ]
    message = failure.step_failure_data.user_failure_data.description
    assert "OPENAI_API_KEY" in message or "key" in message.lower()
    assert SECRET not in message


def test_the_estimate_job_prices_a_partition_without_calling_the_provider(
    instance, ingested, hashing_embedder, server, tmp_path
):
    from insight_assets.defs.estimate import estimate_llm_cost

    definitions = dg.Definitions(
        jobs=[estimate_llm_cost],
        resources={
            "storage": ingested,
            "embedder": hashing_embedder,
            "llm": hosted_llm(server, tmp_path, api_key=SECRET),
        },
    )
    result = definitions.resolve_job_def("estimate_llm_cost").execute_in_process(
        instance=instance, partition_key="demo"
    )

    assert result.success and server.requests == []
    (output,) = [e for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_OUTPUT]
    reported = output.event_specific_data.metadata
    assert reported["calls"].value >= 2 + 1 + 1  # two papers compressed, one combination, its answers
    assert float(reported["cost_usd"].value) > 0
    assert "compress_document@v1" in reported["estimate"].value
