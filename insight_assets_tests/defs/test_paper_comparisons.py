"""Each paper's whole comparison, offline: XSum's Table 1 (SurveySum's two pipelines beside XSum),
ConTReGen's Tables 2, 5, 7 and 9 (the multi-hop baselines, the ablations, facet coverage, cost) and
InsightGen's RQ5 (the advanced RAG baselines) on the demo's shared build, each report's table showing
every method with its cost; ConTReGen's Table 8 (a related-work paragraph's topic asked, the answers
scored against the paragraph) on three corpus papers, one citing the other two."""

from __future__ import annotations

from pathlib import Path

from insight_assets.core.methods import contregen, xsum
from insight_assets.core.methods.insightgen import INSIGHT_METHODS
from insight_assets.defs.resources import LLMResource
from insight_assets_tests.conftest import add_collection
from insight_assets_tests.defs.helpers import assets_up_to, check, materialize_collection, metadata

# Le and Mikolov's paper, whose related work cites both word2vec papers.
CITING_PAPERS = (
    "distributed-representations-of-sentences-and-documents.pdf",
    "distributed-representations-of-words-and-phrases-and-their-compositionality.pdf",
    "efficient-estimation-of-word-representations-in-vector-space.pdf",
)


def _rows(storage, table: str, collection: str) -> list[dict]:
    return storage.warehouse.rows(f"SELECT * FROM {table} WHERE collection = ?", [collection])


def test_every_method_of_the_three_papers_comparisons_on_the_demo(demo_offline):
    storage, result = demo_offline.storage, demo_offline.result

    summaries = {row["method"] for row in _rows(storage, "xsum_summaries", "demo") if row["summary"]}
    assert summaries == set(xsum.SUMMARY_METHODS)
    xsum_report = Path(metadata(result, "xsum_scores")["report_file"]).read_text()
    assert all(f"| {method} |" in xsum_report for method in xsum.SUMMARY_METHODS)
    assert (
        "rougeL" in xsum_report and "G-Eval: plain score" in xsum_report and "judge: offline" in xsum_report
    )
    assert check(result, "summary_citations_in_target").passed

    answers = _rows(storage, "contregen_answers", "demo")
    assert {a["method"] for a in answers if a["answer"]} == set(contregen.METHODS)
    assert all(s["facet_coverage"] is not None for s in _rows(storage, "contregen_scores", "demo"))
    contregen_report = Path(metadata(result, "contregen_scores")["report_file"]).read_text()
    for column in ("rouge_l", "entailment", "contradiction", "facet_coverage", "calls", "seconds"):
        assert column in contregen_report
    assert all(f"| {method} |" in contregen_report for method in contregen.METHODS)
    assert check(result, "answers_cite_retrieved_passages").passed

    insights = {row["method"] for row in _rows(storage, "insights", "demo")}
    assert insights == set(INSIGHT_METHODS)
    method_report = Path(metadata(result, "method_report")["report_file"]).read_text()
    assert "## Cost per question" in method_report
    assert all(
        f"| {method} |" in method_report for method in ("iterative_rag", "multi_query_rag", "agentic_rag")
    )


def test_a_related_work_paragraph_is_asked_and_every_method_scored_against_it(
    corpus, instance, storage, hashing_embedder, tmp_path
):
    add_collection(storage, "word2vec", [corpus / "nlp-embeddings" / name for name in CITING_PAPERS])
    result = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "word2vec",
        llm=LLMResource(data_dir=str(tmp_path / "data")),
        assets=assets_up_to("contregen_scores"),
        run_config={"ops": {"contregen_trees": {"config": {"max_questions": 1, "reference_questions": 1}}}},
    )

    scored = _rows(storage, "contregen_scores", "word2vec")
    references = [s for s in scored if s["question_id"].startswith("ref-")]
    assert {s["method"] for s in references} == set(contregen.METHODS)
    assert all(
        0 < s["rouge_l"] <= 1 and 0 <= s["entailment"] <= 1 for s in references if s["rouge_l"] is not None
    )
    assert any(s["rouge_l"] is not None for s in references)
    assert all(s["facet_coverage"] is not None for s in scored)
    assert check(result, "answers_cite_retrieved_passages").passed
