"""ConTReGen's three assets on the demo collection: offline, and with a fake OpenAI server playing
the model (planning, both verifications and the writing) after an offline curation."""

from __future__ import annotations

import json
import re
from pathlib import Path

from insight_assets.core.methods.contregen.baselines import PREVIOUS_ANSWER
from insight_assets.defs.catalog import assets_named
from insight_assets.defs.citations.assets import citations
from insight_assets.defs.ingestion.assets import chunks, parsed_documents, source_documents
from insight_assets.defs.ingestion.embeddings import chunk_embeddings
from insight_assets.defs.insightgen.themes import theme_graph
from insight_assets.defs.resources import LLMResource
from insight_assets_tests.conftest import DEMO_COLLECTION, add_collection
from insight_assets_tests.defs.helpers import check, hosted_llm, materialize_collection, metadata
from insight_assets_tests.fake_model_server import Received, Reply

contregen_trees, contregen_answers, contregen_scores = assets_named(
    "contregen_trees", "contregen_answers", "contregen_scores"
)
compressed_documents, generated_questions, generated_answers = assets_named(
    "compressed_documents", "generated_questions", "generated_answers"
)

DEMO_PDFS = sorted(DEMO_COLLECTION.glob("*.pdf"))
UPSTREAM = [
    source_documents,
    parsed_documents,
    chunks,
    chunk_embeddings,
    citations,
    theme_graph,
    compressed_documents,
    generated_questions,
    generated_answers,
]
CONTREGEN = [contregen_trees, contregen_answers, contregen_scores]
METHODS = {
    "contregen",
    "retgen",
    "retgen_budget",
    "iterretgen",
    "self_ask",
    "searchain",
    "dsp",
    "contre_no_synthesis",
    "dsp_with_contre",
}
FEW_QUESTIONS = {"ops": {"contregen_trees": {"config": {"max_questions": 3}}}}


def _rows(storage, table: str) -> list[dict]:
    return storage.warehouse.rows(f"SELECT * FROM {table} WHERE collection = 'demo'")


def _chunk_docs(storage) -> dict[str, str]:
    return {
        row["chunk_id"]: row["doc_id"]
        for row in storage.warehouse.rows(
            "SELECT chunk_id, doc_id FROM chunks WHERE collection = 'demo' AND profile = 'passage'"
        )
    }


def test_the_three_assets_build_offline_on_the_demo(instance, storage, hashing_embedder, tmp_path):
    add_collection(storage, "demo", DEMO_PDFS)
    llm = LLMResource(data_dir=str(tmp_path / "data"))

    result = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "demo",
        llm=llm,
        assets=UPSTREAM + CONTREGEN,
        run_config=FEW_QUESTIONS,
    )

    nodes = _rows(storage, "contregen_trees")
    roots = [n for n in nodes if n["parent_id"] is None]
    assert len(roots) == 3 and all(r["gold_doc_ids"] and r["calls"] > 0 for r in roots)
    assert max(n["depth"] for n in nodes) <= 2
    for node in nodes:
        if node["status"] == "pruned_not_needed":
            assert node["reason"].startswith("offline:") and not node["passage_chunk_ids"]
        if node["status"] == "kept":
            assert any(node["passage_relevant"]) and node["search_query"]
    answers = _rows(storage, "contregen_answers")
    assert {(a["question_id"], a["method"]) for a in answers} == {
        (r["question_id"], m) for r in roots for m in METHODS
    }
    docs = _chunk_docs(storage)
    for answer in answers:
        assert answer["status"] == "written" and answer["cited_chunk_ids"]
        assert set(answer["cited_chunk_ids"]) <= set(answer["retrieved_chunk_ids"]) <= set(docs)
        assert re.search(r"\(.+, pp?\. \d+", answer["rendered"])
    assert check(result, "answers_cite_retrieved_passages").passed
    trees = metadata(result, "contregen_trees")
    assert "```mermaid" in trees["example_tree"] and trees["questions"] == 3
    scored = _rows(storage, "contregen_scores")
    assert {s["method"] for s in scored} == METHODS and all(0 <= s["recall"] <= 1 for s in scored)
    report = Path(metadata(result, "contregen_scores")["report_file"])
    text = report.read_text()
    assert "lexical stand-ins" in text and "| chance |" in text and "```mermaid" in text
    assert "facet_coverage" in text and "NLI by the judge model" in text and "Self-RAG is not built" in text
    assert "offline stand-ins, not a language model: planner, writer, judge" in text
    # facets come from the theme graph: every generated question has gold papers with themes
    assert all(s["facet_coverage"] is not None and s["seconds"] is not None for s in scored)
    assert (report.parent / "contregen_recall.png").read_bytes().startswith(b"\x89PNG")


def _model(request: Received) -> Reply:
    """A scripted model: the root plans two sub-questions, the verifier needs the first only, the
    judge finds every passage relevant; a summary cites its first passage, an answer every source."""
    prompt = request.last_user_text()
    if "You plan the search" in prompt:
        question = re.search(r"The question to plan for now: (.*)", prompt).group(1)
        query = re.search(r"The question the whole answer is for: (.*)", prompt).group(1)
        subs = ["Which datasets are used?", "Who funded the work?"] if question == query else []
        return Reply(json.dumps({"further_plan_needed": bool(subs), "sub_questions": subs}))
    if "You check a search plan" in prompt:
        verdicts = [
            {"index": 1, "needed": True, "reason": "a facet", "search_query": "datasets used for evaluation"},
            {"index": 2, "needed": False, "reason": "off the topic"},
        ]
        return Reply(json.dumps({"verdicts": verdicts}))
    if "You judge retrieved passages" in prompt:
        ids = re.findall(r"^\[(S\d+)\] ", prompt, re.MULTILINE)
        return Reply(json.dumps({"verdicts": [{"id": i, "relevant": True} for i in ids]}))
    if "the way Self-Ask does" in prompt:
        first = "asked so far, with their intermediate answers from the papers:\n(none)" in prompt
        return Reply(
            json.dumps({"follow_up_needed": first, "follow_up": "Which datasets are used?" if first else ""})
        )
    if "the way SearChain does" in prompt:
        first = "with the answers the papers support:\n(none)" in prompt
        return Reply(json.dumps({"queries": ["datasets used for evaluation"] if first else []}))
    if "DSP's multi-hop search" in prompt:
        return Reply(json.dumps({"queries": ["datasets used for evaluation", "evaluation metrics"]}))
    if "DSP's predict stage" in prompt:
        cited = ", ".join(dict.fromkeys(re.findall(r"^\[(S\d+)\] ", prompt, re.MULTILINE)))
        return Reply(
            json.dumps({"reasoning": "the passages name them", "text": f"A reasoned answer [{cited}]."})
        )
    if "You summarize what a collection" in prompt:
        return Reply("The datasets are named in the passages [S1].")
    if "comprehensive long-form answer" in prompt:
        cited = ", ".join(dict.fromkeys(re.findall(r"^\[(S\d+)\] ", prompt, re.MULTILINE)))
        return Reply(f"A long answer built on the passages and findings [{cited}].")
    if "You evaluate a long-form answer" in prompt:
        return Reply(json.dumps({"reasoning": "scripted", "coverage": 4, "relevance": 5}))
    return Reply("unexpected prompt", output_tokens=1)


def test_a_model_plans_verifies_and_writes_through_the_openai_api(
    instance, storage, hashing_embedder, tmp_path, server
):
    server.responder = _model
    add_collection(storage, "demo", DEMO_PDFS[:2])
    offline = LLMResource(data_dir=str(tmp_path / "data"))
    materialize_collection(instance, storage, hashing_embedder, "demo", llm=offline, assets=UPSTREAM)
    llm = hosted_llm(server, tmp_path)

    run_config = {"ops": {"contregen_trees": {"config": {"max_questions": 2}}}}
    result = materialize_collection(
        instance, storage, hashing_embedder, "demo", llm=llm, assets=CONTREGEN, run_config=run_config
    )

    nodes = {(n["question_id"], n["node_id"]): n for n in _rows(storage, "contregen_trees")}
    questions = {qid for qid, _ in nodes}
    assert len(questions) == 2
    for qid in questions:
        assert nodes[(qid, "0")]["expansion"] == "expanded"
        assert nodes[(qid, "0.1")]["status"] == "kept"
        assert nodes[(qid, "0.1")]["search_query"] == "datasets used for evaluation"
        assert nodes[(qid, "0.1")]["expansion"] == "no_further_plan"
        assert nodes[(qid, "0.2")]["status"] == "pruned_not_needed"
        assert nodes[(qid, "0.2")]["reason"] == "off the topic"
        # plan, verify, judge (root); plan (child): four calls before any writing
        assert nodes[(qid, "0")]["calls"] == 4
    plans = [r for r in server.requests if "You plan the search" in r.last_user_text()]
    assert plans and all(r.body["temperature"] == 0 for r in plans)
    writes = [
        r
        for r in server.requests
        if "comprehensive long-form answer" in r.last_user_text()
        and "DSP's predict" not in r.last_user_text()
    ]
    assert writes and all(r.body["temperature"] == 0.3 and "response_format" not in r.body for r in writes)
    # IterRetGen's rounds 2-5 refine the round before: its answer is in the prompt, as a finding
    # (a round whose prompt repeats the round before's is answered from the cache, not sent).
    refined = {
        re.search(r"^Question: (.*)$", w.last_user_text(), re.MULTILINE).group(1)
        for w in writes
        if f"On '{PREVIOUS_ANSWER}': A long answer" in w.last_user_text()
    }
    assert len(refined) == len(questions)
    # Verification and synthesis carry their one worked example.
    assert all("A worked example (invented" in w.last_user_text() for w in writes)

    answers = {(a["question_id"], a["method"]): a for a in _rows(storage, "contregen_answers")}
    for qid in questions:
        tree_answer = answers[(qid, "contregen")]
        # the leaf's [S1] reaches the root as a chunk of the sub-question's retrieval
        leaf_chunks = set(nodes[(qid, "0.1")]["passage_chunk_ids"])
        assert set(tree_answer["cited_chunk_ids"]) & leaf_chunks
        assert answers[(qid, "contregen")]["calls"] == 4 + 2  # and the leaf's summary, the root's answer
        assert answers[(qid, "iterretgen")]["calls"] == 5 and answers[(qid, "retgen")]["calls"] == 1
        # one follow-up (or chain), its answer, the check that no more is needed, the final answer
        assert answers[(qid, "self_ask")]["calls"] == 4 and answers[(qid, "searchain")]["calls"] == 4
        assert answers[(qid, "dsp")]["calls"] == 2  # the hops, the reasoned answer
        # the ablations share the tree's planning and verification (4 calls) and write once
        assert (
            answers[(qid, "contre_no_synthesis")]["calls"] == 5
            and answers[(qid, "dsp_with_contre")]["calls"] == 5
        )
        assert answers[(qid, "dsp")]["answer"].startswith("A reasoned answer")
        assert all(answers[(qid, m)]["status"] == "written" for m in METHODS)
        # DSP retrieved for the question and its two hops
        assert len(answers[(qid, "dsp")]["retrieved_chunk_ids"]) > len(
            answers[(qid, "retgen")]["retrieved_chunk_ids"]
        )
    assert check(result, "answers_cite_retrieved_passages").passed
    scored = _rows(storage, "contregen_scores")
    assert scored and all(s["coverage"] == 4 and s["relevance"] == 5 for s in scored)
    assert "openai/gpt-4o-mini" in metadata(result, "contregen_scores")["judge"]


INVENTED_ALIAS = "S99"
NOT_GIVEN_CHUNK = "0123456789abcdef0123"


def _writer_citing(citation: str):
    """The scripted model, except that an answer written without findings (the baselines')
    cites ``citation`` beside its first passage: an alias or a chunk it was not given."""

    def model(request: Received) -> Reply:
        prompt = request.body["messages"][0]["content"]
        without_findings = "listed below):\n(none)" in prompt
        if "comprehensive long-form answer" in prompt and without_findings:
            return Reply(f"The passages answer the question [S1]. They say more [{citation}].")
        return _model(request)

    return model


def test_the_citation_check_fails_when_a_writer_invents_an_alias_or_cites_a_passage_not_given(
    instance, storage, hashing_embedder, tmp_path, server
):
    add_collection(storage, "demo", DEMO_PDFS[:2])
    offline = LLMResource(data_dir=str(tmp_path / "data"))
    materialize_collection(instance, storage, hashing_embedder, "demo", llm=offline, assets=UPSTREAM)
    run_config = {"ops": {"contregen_trees": {"config": {"max_questions": 1}}}}

    server.responder = _writer_citing(INVENTED_ALIAS)
    invented = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "demo",
        llm=hosted_llm(server, tmp_path / "invents"),
        assets=CONTREGEN[:2],
        run_config=run_config,
    )
    failed = check(invented, "answers_cite_retrieved_passages")
    assert not failed.passed
    assert "cited sources it was not given" in failed.metadata["problems"].value
    one_shot = [
        a for a in _rows(storage, "contregen_answers") if a["method"] in ("retgen", "contre_no_synthesis")
    ]
    assert one_shot and all(a["status"] == "failed" for a in one_shot)

    server.responder = _writer_citing(NOT_GIVEN_CHUNK)
    # The first build's refused answers are on record and final: only --retry-failed builds it again.
    not_given = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "demo",
        llm=hosted_llm(server, tmp_path / "not_given", retry_failed=True),
        assets=CONTREGEN[:2],
        run_config=run_config,
    )
    failed = check(not_given, "answers_cite_retrieved_passages")
    assert not failed.passed
    assert f"cites {NOT_GIVEN_CHUNK[:12]}, which it was not given" in failed.metadata["problems"].value
