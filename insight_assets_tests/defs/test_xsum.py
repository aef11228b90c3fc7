"""XSum's four assets on the demo collection: offline, and with a fake OpenAI server playing the
model (an abstaining answer, a summary citing a source it was not given, repaired once)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from insight_assets.defs.catalog import assets_named
from insight_assets.defs.citations.assets import citations
from insight_assets.defs.ingestion.assets import chunks, parsed_documents, source_documents
from insight_assets.defs.ingestion.embeddings import chunk_embeddings
from insight_assets.defs.insightgen.themes import theme_graph
from insight_assets.defs.resources import LLMResource
from insight_assets_tests.conftest import DEMO_COLLECTION, add_collection
from insight_assets_tests.defs.helpers import check, hosted_llm, materialize_collection, metadata
from insight_assets_tests.fake_model_server import Received, Reply

DEMO_PDFS = sorted(DEMO_COLLECTION.glob("*.pdf"))
xsum_questions, xsum_answers, xsum_summaries, xsum_scores = assets_named(
    "xsum_questions", "xsum_answers", "xsum_summaries", "xsum_scores"
)
ASSETS = [
    source_documents,
    parsed_documents,
    chunks,
    chunk_embeddings,
    theme_graph,
    citations,
    xsum_questions,
    xsum_answers,
    xsum_summaries,
    xsum_scores,
]


def _rows(storage, table: str) -> list[dict]:
    return storage.warehouse.rows(f"SELECT * FROM {table} WHERE collection = 'demo'")


def test_the_four_assets_build_offline_on_the_demo(instance, storage, hashing_embedder, tmp_path):
    folder = add_collection(storage, "demo", DEMO_PDFS)
    (folder / "summaries.jsonl").write_text(
        json.dumps(
            {
                "topic": "citation graphs",
                "titles": [
                    "SPECTER: Document-level Representation Learning using Citation-informed Transformers"
                ],
            }
        )
        + "\n"
        + json.dumps({"topic": "nothing", "document_ids": ["no-such-paper"]})
        + "\n"
    )
    llm = LLMResource(data_dir=str(tmp_path / "data"))

    result = materialize_collection(instance, storage, hashing_embedder, "demo", llm=llm, assets=ASSETS)

    papers = storage.warehouse.rows("SELECT doc_id FROM parsed_documents WHERE collection = 'demo'")
    questions = _rows(storage, "xsum_questions")
    assert len(questions) == 5 * len(papers) and all(q["status"] == "ok" for q in questions)

    targets = {row["target_id"]: row for row in _rows(storage, "xsum_targets")}
    kinds = {row["kind"] for row in targets.values()}
    assert {"cluster", "collection", "user"} <= kinds
    (user,) = [row for row in targets.values() if row["kind"] == "user"]
    assert user["topic"] == "citation graphs" and len(user["doc_ids"]) == 1
    readable = check(result, "summary_targets_readable")
    assert not readable.passed and readable.metadata["bad_lines"].value == 1

    chunk_docs = {
        row["chunk_id"]: row["doc_id"]
        for row in storage.warehouse.rows(
            "SELECT chunk_id, doc_id FROM chunks WHERE collection = 'demo' AND profile = 'passage'"
        )
    }
    answers = _rows(storage, "xsum_answers")
    assert {a["status"] for a in answers} <= {"answered", "abstained"} and any(
        a["status"] == "answered" for a in answers
    )
    for answer in answers:
        # scope "paper": the 20 reranked chunks come from the question's own paper
        assert 0 < len(answer["passage_chunk_ids"]) <= 20
        assert {chunk_docs[c] for c in answer["passage_chunk_ids"]} == {answer["doc_id"]}
        assert set(answer["cited_chunk_ids"]) <= set(answer["passage_chunk_ids"])

    summaries = _rows(storage, "xsum_summaries")
    by_method = {
        method: [s for s in summaries if s["method"] == method]
        for method in ("xsum", "pipeline_1", "pipeline_2", "plain_rag", "abstracts_only")
    }
    assert all(len(rows) == len(targets) for rows in by_method.values())
    for summary in summaries:
        assert summary["status"] == "written" and summary["finish_reason"] == "stop"
        allowed = set(targets[summary["target_id"]]["doc_ids"])
        assert summary["cited_chunk_ids"] and {chunk_docs[c] for c in summary["cited_chunk_ids"]} <= allowed
        assert re.search(r"\(.+, pp?\. \d+", summary["rendered"]) and "[S" not in summary["rendered"]
    assert check(result, "summary_citations_in_target").passed
    assert check(result, "summaries_not_truncated").passed

    scored = _rows(storage, "xsum_scores")
    assert {(row["method"], row["reference_kind"]) for row in scored} >= {
        ("xsum", "abstracts"),
        ("plain_rag", "abstracts"),
    }
    assert all(0 <= row["rouge1"] <= 1 and 1 <= row["geval_coverage"] <= 5 for row in scored)
    report = metadata(result, "xsum_scores")
    written = Path(report["report_file"]).read_text()
    assert "lexical stand-ins" in written and "| xsum |" in written and "| pipeline_1 |" in written
    assert "G-Eval: plain score" in written and report["geval"] == "plain score"
    assert (
        "offline stand-ins, not a language model: question writer, answerer, summary writer, judge" in written
    )
    assert "xsum, best:" in written and "xsum, worst:" in written
    assert "## Cost per target of the summary step" in written
    costs = {row["method"]: row for row in _rows(storage, "xsum_summaries")}
    assert all(row["calls"] >= 1 and row["seconds"] is not None for row in costs.values())
    assert (Path(report["report_file"]).parent / "xsum_scores.png").read_bytes().startswith(b"\x89PNG")


def _model(request: Received) -> Reply:
    """A scripted model: answers each XSum prompt in its format. The first question of each paper
    abstains; the editor's first draft cites a source it was not given."""
    prompt = request.last_user_text()
    if "Write the whole text again" in prompt:
        return Reply("Repaired summary of the answers [S1].")
    if "You prepare an interview" in prompt:
        k = int(re.search(r"write (\d+) broad", prompt).group(1))
        title = re.search(r"Title: (.*)", prompt).group(1)
        return Reply(json.dumps({"questions": [f"Question {n} about {title}?" for n in range(k)]}))
    if "answering one interview question" in prompt:
        if "Question 0 about" in prompt:
            return Reply(json.dumps({"abstain": True, "answer": ""}))
        return Reply(json.dumps({"abstain": False, "answer": "The passages say so [S1, S2]."}))
    if "final script of an interview" in prompt:
        return Reply("A draft that cites [S1] and a source it was never shown [S999].")
    if "You write a summary of research" in prompt:
        return Reply("Plain retrieval summary [S3].")
    if "Evaluation Form (scores ONLY)" in prompt:
        return Reply("4", top_probabilities={"4": 0.4, "5": 0.4, " 5": 0.1, "the": 0.1})
    if "Coverage (1-5)" in prompt:
        return Reply(json.dumps({"reasoning": "scripted", "score": 4}))
    if "evaluation checklist" in prompt:
        return Reply(json.dumps({"questions": ["Is A said?", "Is B said?"]}))
    if "Answer each question about the summary" in prompt:
        return Reply(json.dumps({"answers": ["yes", "no"]}))
    return Reply("unexpected prompt", output_tokens=1)


def test_a_model_abstains_and_an_out_of_target_citation_is_repaired_once(
    instance, storage, hashing_embedder, tmp_path, server
):
    server.responder = _model
    add_collection(storage, "demo", DEMO_PDFS[:2])
    llm = hosted_llm(server, tmp_path)

    result = materialize_collection(instance, storage, hashing_embedder, "demo", llm=llm, assets=ASSETS)

    answers = _rows(storage, "xsum_answers")
    first = [a for a in answers if a["question_id"].endswith("-q0")]
    assert first and all(a["status"] == "abstained" and a["answer"] is None for a in first)
    answered = [a for a in answers if a["status"] == "answered"]
    assert answered and all(len(a["cited_chunk_ids"]) == 2 for a in answered)

    summaries = {(s["target_id"], s["method"]): s for s in _rows(storage, "xsum_summaries")}
    editor_targets = [key for key in summaries if key[1] in ("xsum", "abstracts_only")]
    editor_prompts = [
        r for r in server.requests if "final script of an interview" in r.body["messages"][0]["content"]
    ]
    repairs = [r for r in editor_prompts if len(r.body["messages"]) == 3]
    assert len(repairs) == len(editor_targets) and len(editor_prompts) == 2 * len(editor_targets)
    assert "S999" in repairs[0].last_user_text()
    for key in editor_targets:
        assert summaries[key]["status"] == "written"
        assert (
            summaries[key]["summary"].startswith("Repaired summary")
            and len(summaries[key]["cited_chunk_ids"]) == 1
        )
    assert check(result, "summary_citations_in_target").passed
    # Generation at the paper's settings, in plain text for the editor.
    editor_body = editor_prompts[0].body
    assert editor_body["temperature"] == 0.3 and editor_body["top_p"] == 0.95
    assert "response_format" not in editor_body

    scored = _rows(storage, "xsum_scores")
    # G-Eval weighted by the score tokens' probabilities: (4 * 0.4 + 5 * 0.5) / 0.9
    assert scored and all(row["geval_coverage"] == 4.556 and row["checkeval"] == 0.5 for row in scored)
    report = metadata(result, "xsum_scores")
    assert "openai/gpt-4o-mini" in report["judge"] and report["geval"] == "probability-weighted"
    written = Path(report["report_file"]).read_text()
    assert "self-judged" in written and "G-Eval: probability-weighted" in written
    assert "pipeline_1, best:" in written and "pipeline_2, worst:" in written
    forms = [r for r in server.requests if "Evaluation Form (scores ONLY)" in r.last_user_text()]
    assert forms and all(r.body["logprobs"] is True and r.body["max_completion_tokens"] == 1 for r in forms)
    refinements = [
        r for r in server.requests if r.last_user_text().startswith("You refine an evaluation checklist")
    ]
    assert refinements and "1. Is A said?" in refinements[0].last_user_text()


def _plain_rag_writer_citing(citation: str):
    """The scripted model, except that the plain-RAG writer cites ``citation`` beside its first
    passage, every time: an alias it was not given, or a chunk it was not shown."""

    def model(request: Received) -> Reply:
        if "You write a summary of research" in request.body["messages"][0]["content"]:
            return Reply(f"Plain retrieval summary [S1]. More of it [{citation}].")
        return _model(request)

    return model


def test_the_citation_check_fails_when_a_writer_invents_an_alias_or_cites_a_chunk_not_given(
    instance, storage, hashing_embedder, tmp_path, server
):
    add_collection(storage, "demo", DEMO_PDFS[:2])
    upstream = ASSETS[:-2]

    server.responder = _plain_rag_writer_citing("S999")
    invented = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "demo",
        llm=hosted_llm(server, tmp_path),
        assets=upstream + [xsum_summaries],
    )
    failed = check(invented, "summary_citations_in_target")
    assert not failed.passed and "cited sources it was not given" in failed.metadata["problems"].value
    plain = [s for s in _rows(storage, "xsum_summaries") if s["method"] == "plain_rag"]
    assert plain and all(s["status"] == "failed" for s in plain)

    # A chunk of the target's own papers that the writer was not shown still fails the check.
    shown = {cid for s in _rows(storage, "xsum_summaries") for cid in s["cited_chunk_ids"]}
    other = next(
        row["chunk_id"]
        for row in _rows(storage, "chunks")
        if row["profile"] == "passage" and row["chunk_id"] not in shown
    )
    server.responder = _plain_rag_writer_citing(other)
    # The first build's refused answers are on record and final: only --retry-failed builds it again.
    not_given = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "demo",
        llm=hosted_llm(server, tmp_path / "again", retry_failed=True),
        assets=[xsum_summaries],
    )
    failed = check(not_given, "summary_citations_in_target")
    assert (
        not failed.passed
        and f"cites {other[:12]}, which it was not given" in failed.metadata["problems"].value
    )
