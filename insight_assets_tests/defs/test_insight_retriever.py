"""Insight-RAG's parametric retriever as assets on the demo papers: trained for real with the bundled
SmolLM2-135M (a short training), reused on an unchanged rerun, answering in the ``parametric`` mode,
scored alone (Table 3); and what happens with nothing to train on or before it is built."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from insight_assets.core.methods import insight_rag
from insight_assets.core.methods.insight_rag import store
from insight_assets.core.methods.insight_rag.report import TRAINING_CHART_FILE
from insight_assets.defs.insight_rag.retriever import insight_retriever
from insight_assets.defs.resources import LLMResource
from insight_assets.defs.runs import register_collections
from insight_assets_tests.conftest import DEMO_COLLECTION, add_collection
from insight_assets_tests.defs.helpers import assets_up_to, check, materialize_collection, metadata

DEMO_PDFS = sorted(DEMO_COLLECTION.glob("*.pdf"))
SHORT = {
    "insight_rag_benchmark": {"config": {"max_buried": 3, "max_multi": 2, "max_matching": 2}},
    "insight_retriever": {
        "config": {"train_on_cpu": True, "epochs": 2, "max_epoch_tokens": 600, "probes": 6}
    },
    "insight_retriever_accuracy": {"config": {"max_items": 2}},
    "insight_rag_answers": {"config": {"retriever_modes": ["parametric"], "rag_ks": [1]}},
}


@pytest.mark.local_model
def test_the_parametric_retriever_trains_once_answers_and_is_scored_alone(
    instance, storage, hashing_embedder, tmp_path
):
    add_collection(storage, "demo", DEMO_PDFS[:3])
    llm = LLMResource(data_dir=str(tmp_path / "llm"))
    run_config = {"ops": SHORT}

    result = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "demo",
        llm=llm,
        assets=assets_up_to("insight_rag_scores"),
        run_config=run_config,
    )

    trained = metadata(result, "insight_retriever")
    assert trained["adapter_reused"] is False and trained["epochs"] == 2 and trained["device"] == "cpu"
    assert trained["training_tokens"] > 0 and len(trained["probe_accuracy"]) == 3
    assert "data:image/png;base64," in trained["loss_curve"]
    adapter = Path(trained["adapter"])
    assert adapter.parent.parent == tmp_path / "adapters" and (adapter / "adapter_config.json").is_file()
    assert check(result, "adapter_trained").passed
    # Whether two short epochs taught it anything: compared with the base model before training.
    beats = check(result, "adapter_beats_base_model")
    base, adapted = trained["probe_accuracy"][0], trained["probe_accuracy"][-1]
    assert beats.passed == (adapted > base) and beats.severity == dg.AssetCheckSeverity.WARN

    answers = storage.warehouse.rows(
        "SELECT * FROM insight_rag_answers WHERE collection = 'demo' AND method = 'insight-rag:parametric'"
    )
    questions = [a for a in answers if a["kind"] != "matching"]
    assert questions and all(a["status"] == "ok" for a in answers)
    for answer in questions:  # a completion from memory, cited by the sentence it is attributed to
        assert answer["insights"] and answer["passage_chunk_ids"]
        assert set(answer["cited_chunk_ids"]) <= set(answer["passage_chunk_ids"]) and answer["ranked_ids"]

    accuracy = storage.warehouse.rows("SELECT * FROM insight_retriever_accuracy WHERE collection = 'demo'")
    assert {row["mode"] for row in accuracy} == set(insight_rag.schemas.ACCURACY_MODES)
    for row in accuracy:
        assert 0.0 <= row["score"] <= 1.0 and row["outputs"] and row["fragment"]
        assert len(row["outputs"]) <= (1 if row["kind"] == "buried" else 10)
    report = Path(metadata(result, "insight_rag_scores")["report_file"]).read_text()
    assert "Retriever accuracy (Table 3)" in report and "| buried | base model | exact match |" in report
    assert "SmolLM2-135M-Instruct.Q4_1 (134.5 M parameters)" in report
    assert "inverts the question templates" in report and "rows are circular" in report
    assert (Path(storage.reports_dir) / "demo" / TRAINING_CHART_FILE).read_bytes().startswith(b"\x89PNG")

    # Nothing changed: the step reuses its build; asked for other probes, it runs, and reads the
    # adapter back rather than training again (the probes do not shape it).
    written = (adapter / "adapter_model.safetensors").stat().st_mtime_ns
    for probes, build in ((6, "reused"), (3, "built: config changed")):
        settings = {"config": {**SHORT["insight_retriever"]["config"], "probes": probes}}
        again = materialize_collection(
            instance,
            storage,
            hashing_embedder,
            "demo",
            llm=llm,
            assets=[insight_retriever],
            run_config={"ops": {"insight_retriever": settings}},
        )
        assert metadata(again, "insight_retriever")["build"].startswith(build)
        assert metadata(again, "insight_retriever")["adapter_reused"] is (probes == 3)
        assert metadata(again, "insight_retriever")["adapter"] == str(adapter)
    assert (adapter / "adapter_model.safetensors").stat().st_mtime_ns == written


def test_without_an_accelerator_the_retriever_trains_only_when_asked(
    instance, storage, hashing_embedder, tmp_path
):
    """On a CPU-only machine the default build trains nothing: it says why and what training would
    cost here, and the parametric answers are failed rows with that reason."""
    add_collection(storage, "demo", DEMO_PDFS[:2])
    result = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "demo",
        llm=LLMResource(data_dir=str(tmp_path / "llm")),
        assets=assets_up_to("insight_rag_answers"),
        run_config={"ops": {name: SHORT[name] for name in ("insight_rag_benchmark", "insight_rag_answers")}},
    )

    assert result.success
    skipped = metadata(result, "insight_retriever")
    assert skipped["status"] == "skipped" and skipped["cpu_minutes_per_epoch"] > 0
    reason = skipped["why_none"]
    assert reason.startswith("not trained: no accelerator; set `train_on_cpu: true` (about ")
    assert "min per epoch here" in reason
    for name in ("adapter_trained", "adapter_beats_base_model"):
        assert not check(result, name).passed and check(result, name).severity == dg.AssetCheckSeverity.WARN
    assert not list(Path(storage.adapters_dir).rglob("adapter_config.json"))
    answers = storage.warehouse.rows(
        "SELECT status, error FROM insight_rag_answers WHERE collection = 'demo' AND method = 'insight-rag:parametric'"
    )
    assert answers and all(a["status"] == "failed" and reason in a["error"] for a in answers)


def test_before_the_retriever_is_built_parametric_answers_are_rows_that_say_why(
    instance, storage, hashing_embedder, tmp_path
):
    add_collection(storage, "demo", DEMO_PDFS[:3])
    llm = LLMResource(data_dir=str(tmp_path / "llm"))
    materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "demo",
        llm=llm,
        assets=assets_up_to("insight_rag_benchmark"),
        run_config={"ops": {"insight_rag_benchmark": SHORT["insight_rag_benchmark"]}},
    )
    items = store.load_benchmark(storage.warehouse, "demo")
    setup = store.open_setup(
        storage.warehouse,
        storage.vectors_uri,
        hashing_embedder.get_embedder(),
        "demo",
        insight_rag.AnswersSettings(retriever_modes=["parametric"]),
    )
    with llm.client(asset="test", partition="demo", run_id=None) as client:
        identified = insight_rag.identify(client, items, setup)
        answers = insight_rag.answer(client, items, identified, setup, baselines=False)

    assert answers and all(a.status == "failed" for a in answers)
    assert all(
        "no parametric insight retriever" in a.error and "build `insight_retriever`" in a.error
        for a in answers
    )


def test_a_collection_without_triples_trains_nothing_and_says_why(
    instance, storage, hashing_embedder, tmp_path
):
    """``knowledge_triples`` built with zero rows: the asset succeeds, a warning says why, and the
    record tells the answers why the parametric mode has nothing."""
    register_collections(instance, ["empty"])
    storage.warehouse.record_build("empty", "knowledge_triples", rows=0, data_version=None, run_id="test")

    result = materialize_collection(instance, storage, hashing_embedder, "empty", assets=[insight_retriever])

    assert result.success
    trained = check(result, "adapter_trained")
    assert not trained.passed and trained.severity == dg.AssetCheckSeverity.WARN
    assert "no triples to train on" in trained.description
    assert metadata(result, "insight_retriever")["status"] == "skipped"
    model, reason = store.open_parametric(storage.warehouse, "empty")
    assert model is None and "no triples to train on" in reason


def test_a_missing_base_model_fails_the_step_before_training(instance, storage, hashing_embedder, tmp_path):
    register_collections(instance, ["empty"])
    storage.warehouse.record_build("empty", "knowledge_triples", rows=3, data_version=None, run_id="test")
    missing = str(tmp_path / "models" / "llama.gguf")

    result = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "empty",
        assets=[insight_retriever],
        raise_on_error=False,
        run_config={"ops": {"insight_retriever": {"config": {"base_model": missing}}}},
    )

    assert not result.success
    (failure,) = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert missing in failure.step_failure_data.user_failure_data.description
    assert "does not exist" in failure.step_failure_data.user_failure_data.description
