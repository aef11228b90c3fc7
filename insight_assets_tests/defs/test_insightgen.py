"""Materialize every asset for the demo collection: theme graph, insights, judge scores, report."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import dagster as dg
import pytest

from insight_assets.core.methods.insightgen import INSIGHT_METHODS
from insight_assets.defs.resources import LLMResource
from insight_assets.defs.runs import ALL_ASSETS
from insight_assets_tests.conftest import DEMO_COLLECTION, add_collection
from insight_assets_tests.defs.helpers import (
    assets_up_to,
    check,
    materialize_collection,
    metadata,
)
from insight_assets_tests.fake_model_server import FakeModelServer, Received, Reply

DEMO_PDFS = sorted(DEMO_COLLECTION.glob("*.pdf"))


@pytest.fixture
def llm(tmp_path: Path) -> LLMResource:
    return LLMResource(data_dir=str(tmp_path / "data"))


def test_every_asset_builds_and_the_report_ranks_all_methods(demo_offline):
    result, warehouse = demo_offline.result, demo_offline.storage.warehouse
    assert result.success

    chunks = warehouse.rows("SELECT count(*) AS n FROM chunks WHERE collection='demo' AND profile='section'")[
        0
    ]["n"]
    graph = metadata(result, "theme_graph")
    assert graph["clusters"] == math.ceil(math.sqrt(chunks)) and graph["chunks"] == chunks
    assert graph["graph"].startswith("![theme graph](data:image/png;base64,")
    assert Path(graph["graph_file"]).read_bytes().startswith(b"\x89PNG")

    insight_rows = warehouse.rows("SELECT * FROM insights WHERE collection = 'demo'")
    pairs = warehouse.rows(
        "SELECT count(*) AS n FROM generated_answers WHERE collection='demo' AND status='kept'"
    )[0]["n"]
    assert {row["method"] for row in insight_rows} == set(INSIGHT_METHODS)
    for method in INSIGHT_METHODS:
        per_question = [row for row in insight_rows if row["method"] == method]
        assert 0 < len(per_question) <= 5 * pairs
    assert all(row["chunk_ids"] and 0 <= row["novelty"] <= 5 for row in insight_rows)
    assert check(result, "insights_cite_their_context").passed
    repeats = check(result, "insights_do_not_repeat_the_answer")
    assert repeats.severity == dg.AssetCheckSeverity.WARN
    assert repeats.metadata["insights_checked"].value == len(insight_rows)
    assert repeats.metadata["threshold"].value == 0.75
    # The vector baselines read as many chunks as InsightGen selected, for every question.
    runs = warehouse.rows("SELECT question_id, method, chunk_ids FROM insight_runs WHERE collection = 'demo'")
    counts = {(row["question_id"], row["method"]): len(row["chunk_ids"]) for row in runs}
    for question_id in {row["question_id"] for row in runs}:
        assert counts[(question_id, "vector_topk")] == counts[(question_id, "insightgen")]
        # so do the RAG baselines (RQ5: InsightGen's chunk budget)
        for method in ("iterative_rag", "multi_query_rag", "agentic_rag"):
            assert 0 < counts[(question_id, method)] <= counts[(question_id, "insightgen")]

    scores = warehouse.rows("SELECT level, method, repetition FROM judge_scores WHERE collection = 'demo'")
    assert {row["level"] for row in scores} == {"set", "insight"}
    assert {row["repetition"] for row in scores if row["level"] == "insight"} == set(range(10))

    # The offline judge shares its criterion with the offline generator: no ranking is made of it.
    report = metadata(result, "method_report")
    assert report["ranking"].startswith("Not judged: needs a model")
    assert not re.findall(r"^\| (\d) \| (\w+) \|", report["ranking"], flags=re.MULTILINE)
    written = Path(report["report_file"])
    text = written.read_text()
    assert "## Ranking\n\nNot judged: needs a model" in text and "placeholders until a model judges" in text
    assert (written.parent / "method_scores.png").is_file()
    assert "## Cost per question" in text and "agentic_rag" in text and "HyDE" in text
    retrieval = {row["method"]: row["retrieval_calls"] for row in runs_with_costs(warehouse)}
    assert retrieval["insightgen"] == 0 and all(
        retrieval[m] > 0 for m in ("iterative_rag", "multi_query_rag", "agentic_rag")
    )


def _judge_reply(request: Received) -> Reply:
    """A second judge that scores every shown method by its label, so orderings are known."""
    prompt = request.last_user_text()
    labels = sorted(set(re.findall(r"Method [A-Z]", prompt)))
    scores = [
        {
            "label": label,
            **{criterion: 5 - position % 5 for criterion in ("novelty", "diversity", "relevance", "depth")},
            "overall": 5 - position % 5,
            "rationale": "scripted",
        }
        for position, label in enumerate(labels)
    ]
    return Reply(json.dumps({"scores": scores}))


def test_two_judges_are_compared(instance, storage, hashing_embedder, llm, monkeypatch, tmp_path):
    server = FakeModelServer().start()
    server.responder = _judge_reply
    monkeypatch.setenv("SECOND_JUDGE_KEY", "judge-key-123")
    try:
        add_collection(storage, "demo", DEMO_PDFS[:2])
        result = materialize_collection(
            instance,
            storage,
            hashing_embedder,
            "demo",
            llm=llm,
            assets=assets_up_to("method_report"),
            run_config={
                "ops": {
                    "judge_scores": {
                        "config": {
                            "judges": [
                                {"name": "offline"},
                                {
                                    "name": "second",
                                    "provider": "openai",
                                    "model": "gpt-4o-mini",
                                    "base_url": f"{server.url}/v1",
                                    "api_key_env": "SECOND_JUDGE_KEY",
                                },
                            ],
                            "repetitions": 2,
                        }
                    }
                }
            },
        )
    finally:
        server.stop()
    judged = metadata(result, "judge_scores")
    assert judged["judges"] == "offline, second"
    assert server.requests, "the second judge was asked"
    assert all("Method A" in request.last_user_text() for request in server.requests)
    # At most the methods one of the paper's tables compared, in one prompt.
    assert all("Method F" not in request.last_user_text() for request in server.requests)
    assert all(
        method not in request.last_user_text()
        for request in server.requests
        for method in ("insightgen", "vector_topk")
    )
    assert "| set | offline | second |" in judged["judge_agreement"]
    by_judge = {row["judge"] for row in storage.warehouse.rows("SELECT DISTINCT judge FROM judge_scores")}
    assert by_judge == {"offline", "second"}
    # A model judged: the methods are ranked, by it and not by the offline judge.
    ranked = re.findall(
        r"^\| (\w+) \| (\d) \| (\w+) \| \S+ \| (\w+) \|",
        metadata(result, "method_report")["ranking"],
        re.MULTILINE,
    )
    assert ranked and {judge for *_, judge in ranked} == {"second"}
    assert [panel for panel, rank, *_ in ranked if rank == "1"] == ["baselines", "advanced_rag"]


def test_no_kept_answer_is_said_by_a_warning_and_the_chain_still_builds(
    instance, storage, hashing_embedder, llm
):
    add_collection(storage, "demo", DEMO_PDFS[:2])
    materialize_collection(
        instance, storage, hashing_embedder, "demo", llm=llm, assets=assets_up_to("method_report")
    )
    # What a model whose every answer failed its checks leaves: answers, none kept (a build of
    # them, whose data version the steps below see change).
    with storage.warehouse.connect() as connection:
        connection.execute("UPDATE generated_answers SET status = 'failed' WHERE collection = 'demo'")
    storage.warehouse.record_build(
        "demo", "generated_answers", rows=0, data_version="none kept", run_id="test"
    )
    insightgen_assets = [
        a
        for a in ALL_ASSETS
        if {"insights", "judge_scores", "method_report"} & {k.to_user_string() for k in a.keys}
    ]

    result = materialize_collection(
        instance, storage, hashing_embedder, "demo", llm=llm, assets=insightgen_assets
    )

    assert result.success
    found = check(result, "questions_to_find_insights_for")
    assert not found.passed and found.severity.value == "WARN"
    assert "`generated_answers` kept none" in found.description
    assert storage.warehouse.rows("SELECT * FROM insights WHERE collection = 'demo'") == []
    assert storage.warehouse.rows("SELECT * FROM judge_scores WHERE collection = 'demo'") == []
    assert "no insights to judge" in metadata(result, "judge_scores")["why_none"]
    assert metadata(result, "method_report")["dagster/row_count"] == 0


def runs_with_costs(warehouse) -> list[dict]:
    return warehouse.rows("SELECT method, retrieval_calls FROM insight_runs WHERE collection = 'demo'")


def _themes(storage) -> dict[frozenset[str], tuple[int, str]]:
    """Each stored theme's chunks, with its number and label."""
    rows = storage.warehouse.rows(
        """SELECT a.cluster, c.label, list(a.chunk_id) AS chunks FROM theme_assignments a
           JOIN theme_clusters c USING (collection, cluster) WHERE a.collection = 'papers' GROUP BY ALL"""
    )
    return {frozenset(row["chunks"]): (row["cluster"], row["label"]) for row in rows}


def test_a_rebuild_keeps_the_themes_a_new_paper_did_not_touch_and_removing_it_restores_them(
    storage, hashing_embedder, instance
):
    folder = add_collection(storage, "papers", DEMO_PDFS[:4])
    assets = assets_up_to("theme_graph")
    keep = {"ops": {"theme_graph": {"config": {"refit_share": 0.9}}}}

    def rebuild(run_config=keep) -> dict:
        result = materialize_collection(
            instance, storage, hashing_embedder, "papers", assets=assets, run_config=run_config
        )
        return metadata(result, "theme_graph")

    assert rebuild()["themes"].startswith("fitted afresh: no theme graph of an earlier build")
    before = _themes(storage)
    add_collection(storage, "papers", DEMO_PDFS[4:5])
    grown = rebuild()
    assert grown["themes"].startswith("themes of the last build carried over:")
    after = _themes(storage)
    untouched = set(before) & set(after)
    assert untouched, "the new paper's chunks joined every theme"
    for chunks in untouched:
        assert after[chunks] == before[chunks]  # same number, same label
    old_chunks = set().union(*before)
    for chunks, (number, _) in after.items():
        assert before[frozenset(chunks & old_chunks)][0] == number

    (folder / DEMO_PDFS[4].name).unlink()
    # Back at the first build's chunks and settings: its graph comes back (core/themes/graph_archive.py).
    assert rebuild()["themes"].startswith("the graph built from these very chunks and settings on")
    assert _themes(storage) == before

    afresh = rebuild({"ops": {"theme_graph": {"config": {"keep_themes": False}}}})
    assert afresh["themes"] == "fitted afresh: keep_themes is off"
