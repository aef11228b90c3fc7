"""Each paper's whole comparison on a corpus collection of ten papers (offline): XSum's Table 1
(SurveySum's two pipelines beside XSum), ConTReGen's Tables 2, 5, 7, 8 and 9 (the multi-hop baselines,
the ablations, facet coverage, reference metrics, cost) and InsightGen's RQ5 (the advanced RAG
baselines), each report's table showing every method with its cost."""

from __future__ import annotations

from pathlib import Path

import pytest

from insight_assets.core.methods import contregen, xsum
from insight_assets.core.methods.insightgen import INSIGHT_METHODS
from insight_assets.defs.resources import LLMResource
from insight_assets_tests.conftest import add_collection
from insight_assets_tests.defs.helpers import assets_up_to, check, materialize_collection, metadata

pytestmark = pytest.mark.long

COLLECTION = "nlp-embeddings"
SMALL = {
    "insights": {"max_questions": 1},
    "judge_scores": {"repetitions": 1},
    "xsum_questions": {"questions_per_paper": 1},
    "xsum_answers": {"candidates": 20, "top_n": 5},
    "xsum_summaries": {"pipeline_2_candidates": 20},
    "contregen_trees": {"max_questions": 1, "reference_questions": 1},
}


def _rows(storage, table: str) -> list[dict]:
    return storage.warehouse.rows(f"SELECT * FROM {table} WHERE collection = ?", [COLLECTION])


def test_every_method_of_the_three_papers_comparisons_on_a_ten_paper_collection(
    corpus, instance, storage, hashing_embedder, tmp_path
):
    pdfs = sorted((corpus / COLLECTION).glob("*.pdf"))[:10]
    assert len(pdfs) == 10
    add_collection(storage, COLLECTION, pdfs)

    result = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        COLLECTION,
        llm=LLMResource(data_dir=str(tmp_path / "data")),
        assets=assets_up_to("xsum_scores", "contregen_scores", "method_report"),
        run_config={"ops": {name: {"config": values} for name, values in SMALL.items()}},
    )

    summaries = {row["method"] for row in _rows(storage, "xsum_summaries") if row["summary"]}
    assert summaries == set(xsum.SUMMARY_METHODS)
    xsum_report = Path(metadata(result, "xsum_scores")["report_file"]).read_text()
    assert all(f"| {method} |" in xsum_report for method in xsum.SUMMARY_METHODS)
    assert (
        "rougeL" in xsum_report and "G-Eval: plain score" in xsum_report and "judge: offline" in xsum_report
    )

    answers = _rows(storage, "contregen_answers")
    assert {a["method"] for a in answers if a["answer"]} == set(contregen.METHODS)
    scored = _rows(storage, "contregen_scores")
    references = [s for s in scored if s["question_id"].startswith("ref-")]
    # a related-work section's topic, scored against the section with ROUGE-L and NLI
    assert {s["method"] for s in references} == set(contregen.METHODS)
    assert all(
        0 < s["rouge_l"] <= 1 and 0 <= s["entailment"] <= 1 for s in references if s["rouge_l"] is not None
    )
    assert all(s["facet_coverage"] is not None for s in scored)
    contregen_report = Path(metadata(result, "contregen_scores")["report_file"]).read_text()
    for column in ("rouge_l", "entailment", "contradiction", "facet_coverage", "calls", "seconds"):
        assert column in contregen_report
    assert all(f"| {method} |" in contregen_report for method in contregen.METHODS)
    assert check(result, "answers_cite_retrieved_passages").passed

    insights = {row["method"] for row in _rows(storage, "insights")}
    assert insights == set(INSIGHT_METHODS)
    method_report = Path(metadata(result, "method_report")["report_file"]).read_text()
    assert "## Cost per question" in method_report
    assert all(
        f"| {method} |" in method_report for method in ("iterative_rag", "multi_query_rag", "agentic_rag")
    )
    assert check(result, "summary_citations_in_target").passed
