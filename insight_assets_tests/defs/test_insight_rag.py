"""Insight-RAG's four assets on the demo collection: offline, and with a fake OpenAI server playing
the model (triples, questions, the identifier, the ``llm`` retriever, the generator, matching)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from insight_assets.core.methods.insight_rag import EXTRACTOR
from insight_assets.core.methods.insight_rag.benchmark import contains
from insight_assets.core.methods.insight_rag.report import CHART_FILE
from insight_assets.defs.catalog import assets_named
from insight_assets.defs.citations.assets import citations
from insight_assets.defs.ingestion.assets import chunks, parsed_documents, source_documents
from insight_assets.defs.ingestion.embeddings import chunk_embeddings
from insight_assets.defs.insight_rag.answers import insight_rag_scores
from insight_assets.defs.insight_rag.retriever import insight_retriever
from insight_assets.defs.resources import LLMResource
from insight_assets_tests.conftest import DEMO_COLLECTION, add_collection
from insight_assets_tests.defs.helpers import (
    BRIEF_TRAINING,
    check,
    hosted_llm,
    materialize_collection,
    metadata,
)
from insight_assets_tests.fake_model_server import Received, Reply

knowledge_triples, insight_rag_benchmark, insight_rag_answers, insight_retriever_accuracy = assets_named(
    "knowledge_triples", "insight_rag_benchmark", "insight_rag_answers", "insight_retriever_accuracy"
)

DEMO_PDFS = sorted(DEMO_COLLECTION.glob("*.pdf"))
UPSTREAM = [source_documents, parsed_documents, chunks, chunk_embeddings, citations]
INSIGHT_RAG = [
    knowledge_triples,
    insight_rag_benchmark,
    insight_retriever,
    insight_retriever_accuracy,
    insight_rag_answers,
    insight_rag_scores,
]
RAG = {"rag@1", "rag@3", "rag@5", "rag@10"}


def _rows(storage, table: str) -> list[dict]:
    return storage.warehouse.rows(f"SELECT * FROM {table} WHERE collection = 'demo'")


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def test_the_four_assets_build_offline_on_the_demo(instance, storage, hashing_embedder, tmp_path):
    add_collection(storage, "demo", DEMO_PDFS)
    llm = LLMResource(data_dir=str(tmp_path / "data"))

    run_config = {
        "ops": {
            **BRIEF_TRAINING,
            "insight_rag_answers": {"config": {"retriever_modes": ["index", "sentences"]}},
        }
    }
    result = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "demo",
        llm=llm,
        assets=UPSTREAM + INSIGHT_RAG,
        run_config=run_config,
    )

    triples = _rows(storage, "knowledge_triples")
    assert triples and {t["extractor"] for t in triples} == {EXTRACTOR}
    for triple in triples:  # read in its sentence: subject and object as written there
        assert _words(triple["subject"]) in _words(triple["sentence"])
        assert _words(triple["object"]) in _words(triple["sentence"])

    items = _rows(storage, "insight_rag_benchmark")
    kinds = {kind: [i for i in items if i["kind"] == kind] for kind in ("buried", "multi", "matching")}
    assert kinds["buried"] and kinds["matching"] and len(kinds["buried"]) <= 200
    for item in kinds["buried"] + kinds["multi"]:
        assert item["question"].endswith("?") and item["gold_doc_ids"]
        assert not any(contains(item["question"], gold) for gold in item["gold_answers"])
    assert all(len(i["gold_answers"]) == 1 for i in kinds["buried"])
    assert all(len(set(i["gold_doc_ids"])) >= 2 for i in kinds["multi"])
    verdicts = [i["gold_answers"][0] for i in kinds["matching"]]
    assert verdicts.count("Yes") == verdicts.count("No")
    fates = _rows(storage, "insight_rag_triple_fates")
    assert {f["triple_id"] for f in fates} == {t["triple_id"] for t in triples}
    assert all(f["reason"] for f in fates if f["fate"] == "dropped")
    assert metadata(result, "insight_rag_benchmark")["items"]["buried"] == len(kinds["buried"])

    answers = _rows(storage, "insight_rag_answers")
    questions = {i["item_id"] for i in kinds["buried"] + kinds["multi"]}
    expected = RAG | {"vanilla", "insight-rag:index", "insight-rag:sentences"}
    for item_id in questions:
        assert {a["method"] for a in answers if a["item_id"] == item_id} == expected
    for answer in answers:
        assert answer["status"] in ("ok", "failed")
        assert set(answer["cited_chunk_ids"]) <= set(answer["passage_chunk_ids"])
        if answer["method"] == "rag@1" and answer["kind"] != "matching":
            assert len(answer["passage_chunk_ids"]) == 1 and len(answer["ranked_ids"]) > 1
    assert check(result, "answers_cite_given_passages").passed

    scored = _rows(storage, "insight_rag_scores")
    assert {(s["item_id"], s["method"]) for s in scored} == {(a["item_id"], a["method"]) for a in answers}
    assert all(0 <= s["exact_match"] <= 1 for s in scored)
    report = Path(metadata(result, "insight_rag_scores")["report_file"])
    index_rows = [line for line in report.read_text().splitlines() if "| insight-rag:index |" in line]
    assert index_rows and all(
        "circular: searches the triples the benchmark was built from" in row for row in index_rows
    )
    # Hits@50 by construction holds for the whole table: said once, not in every row.
    assert report.read_text().count("doc_hits50 is 1 by construction here: 5 papers") == 1
    assert not any("by construction" in row for row in index_rows)
    assert (report.parent / CHART_FILE).read_bytes().startswith(b"\x89PNG")


# -- a model behind the OpenAI API ----------------------------------------------------------------


def _numbered(prompt: str) -> list[str]:
    return re.findall(r"^\d+\. (.*)$", prompt.split("Sentences:\n", 1)[1], re.MULTILINE)


def _model(request: Received) -> Reply:
    """A scripted model. Triples: each sentence's first four words are a subject, the fifth a
    relation, the next three an object. Questions ask "What does <subject> <relation>?", which the
    identifier turns back into "<subject> <relation>". The completion is the first fact's object;
    an answer quotes its first passage's first three words and cites it; every pair matches."""
    prompt = request.last_user_text()
    if prompt.startswith("Extract knowledge triples"):
        found = []
        for number, sentence in enumerate(_numbered(prompt), start=1):
            words = sentence.split()
            if len(words) >= 8:
                subject, relation, obj = " ".join(words[:4]), words[4], " ".join(words[5:8])
                found.append({"subject": subject, "relation": relation, "object": obj, "sentence": number})
        return Reply(json.dumps({"triples": found}))
    if prompt.startswith("You turn a fact"):
        subject = re.search(r"^Subject: (.*)$", prompt, re.MULTILINE).group(1)
        relation = re.search(r"^Relation: (.*)$", prompt, re.MULTILINE).group(1)
        return Reply(json.dumps({"question": f"What does {subject} {relation}?"}))
    if prompt.startswith("You are given a question or task"):
        asked = re.search(r"What does (.+)\?", prompt.rsplit("Task:\n", 1)[-1])
        fragment = asked.group(1) if asked else "Paper-A cites"
        return Reply(json.dumps([{"insight": fragment, "multi_answer": False}]))
    if prompt.startswith("Complete the sentence fragment"):
        first = re.search(r"^- [^|]+ \| [^|]+ \| (.+?) \(\u201c", prompt, re.MULTILINE)
        return Reply(first.group(1) if first else "Not found in the context.")
    if prompt.startswith("Answer the question using the context"):
        passage = re.search(r"^\[S1\] .*?\n(.*)$", prompt, re.MULTILINE)
        words = " ".join(passage.group(1).split()[:3]) if passage else "nothing"
        return Reply(f"{words} [S1]")
    if prompt.startswith("Answer the question."):
        return Reply("I do not know.")
    if prompt.startswith("You are provided with two research papers"):
        return Reply(json.dumps({"explanation": "scripted", "answer": "Yes"}))
    return Reply("unexpected prompt", output_tokens=1)


def _three_papers_ingested(instance, storage, hashing_embedder, tmp_path) -> None:
    """SPECTER, S2ORC and the literature-graph paper, ingested offline: the two cite the third and
    not each other, so there is one matching pair of each kind."""
    add_collection(storage, "demo", [p for p in DEMO_PDFS if p.name.startswith(("2020.acl", "N18"))])
    offline = LLMResource(data_dir=str(tmp_path / "data"))
    materialize_collection(instance, storage, hashing_embedder, "demo", llm=offline, assets=UPSTREAM)


def test_a_model_extracts_asks_identifies_completes_and_answers_through_the_openai_api(
    instance, storage, hashing_embedder, tmp_path, server
):
    server.responder = _model
    _three_papers_ingested(instance, storage, hashing_embedder, tmp_path)
    llm = hosted_llm(server, tmp_path)
    run_config = {
        "ops": {
            **BRIEF_TRAINING,
            "insight_rag_benchmark": {"config": {"max_buried": 6, "max_multi": 2, "max_matching": 2}},
            "insight_rag_answers": {"config": {"retriever_modes": ["index", "llm"], "rag_ks": [1, 3]}},
        }
    }

    result = materialize_collection(
        instance, storage, hashing_embedder, "demo", llm=llm, assets=INSIGHT_RAG, run_config=run_config
    )

    triples = _rows(storage, "knowledge_triples")
    assert triples and {t["extractor"] for t in triples} == {"openai/gpt-4o-mini"}
    for triple in triples:  # the model's words, normalised: lower case, the relation lemmatised
        words = triple["sentence"].lower().split()
        assert triple["object"] in " ".join(words[5:8]) and triple["relation_text"] == words[4]
    items = {i["item_id"]: i for i in _rows(storage, "insight_rag_benchmark")}
    questions = [i for i in items.values() if i["kind"] != "matching"]
    assert questions and all(
        i["question"] == f"What does {i['subject']} {i['relation_text']}?" for i in questions
    )
    assert {i["writer"] for i in items.values() if i["kind"] != "matching"} == {"openai/gpt-4o-mini"}

    identified = {row["item_id"]: row for row in _rows(storage, "insight_rag_insights")}
    assert set(identified) == set(items)
    for item in questions:
        row = identified[item["item_id"]]
        assert row["status"] == "ok"
        assert row["insights"] == [f"{item['subject']} {item['relation_text']}"]

    answers = {(a["item_id"], a["method"]): a for a in _rows(storage, "insight_rag_answers")}
    for item in questions:
        completed = answers[(item["item_id"], "insight-rag:llm")]
        fragment = identified[item["item_id"]]["insights"][0]
        (insight,) = completed["insights"]
        assert insight.startswith(f"{fragment} ") and len(insight) > len(fragment) + 1
        for method in ("insight-rag:index", "insight-rag:llm", "rag@1", "rag@3"):
            answer = answers[(item["item_id"], method)]
            assert answer["status"] == "ok" and answer["cited_chunk_ids"] == answer["passage_chunk_ids"][:1]
        assert answers[(item["item_id"], "vanilla")]["answer"] == "I do not know."
    matched = [a for a in answers.values() if a["kind"] == "matching"]
    assert {a["item_id"] for a in matched} == {
        i["item_id"] for i in items.values() if i["kind"] == "matching"
    }
    assert len(matched) > 2 and all(a["answer"] == "Yes" for a in matched)
    assert check(result, "answers_cite_given_passages").passed

    calls = [r for r in server.requests if "messages" in r.body]
    assert calls and all(r.body["temperature"] == 0 for r in calls)
    completions = [r for r in calls if r.last_user_text().startswith("Complete the sentence fragment")]
    assert len(completions) == len(questions) + sum(i["kind"] == "matching" for i in items.values())
    assert all(" | " in r.last_user_text() for r in completions)  # facts as subject | relation | object
    scores = metadata(result, "insight_rag_scores")
    assert "insight-rag:llm" in scores["scores"]


def _finds_no_triple(request: Received) -> Reply:
    """The scripted model, except that it finds no triple in any sentence."""
    if request.last_user_text().startswith("Extract knowledge triples"):
        return Reply(json.dumps({"triples": []}))
    return _model(request)


def test_a_model_that_finds_no_triple_is_said_by_a_warning_and_the_sentences_and_matching_go_on(
    instance, storage, hashing_embedder, tmp_path, server
):
    server.responder = _finds_no_triple
    _three_papers_ingested(instance, storage, hashing_embedder, tmp_path)
    run_config = {"ops": {**BRIEF_TRAINING, "insight_rag_benchmark": {"config": {"max_matching": 2}}}}

    result = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "demo",
        llm=hosted_llm(server, tmp_path),
        assets=INSIGHT_RAG,
        run_config=run_config,
    )

    assert result.success
    found = check(result, "triples_found")
    assert not found.passed and "found no triple" in found.description
    assert _rows(storage, "knowledge_triples") == [] and _rows(storage, "insight_rag_sentences")
    items = _rows(storage, "insight_rag_benchmark")
    assert items and {item["kind"] for item in items} == {"matching"}
    assert {a["item_id"] for a in _rows(storage, "insight_rag_answers")} == {i["item_id"] for i in items}


def test_a_benchmark_with_no_item_is_said_by_a_warning_and_the_rest_still_builds(
    instance, storage, hashing_embedder, tmp_path
):
    # Two papers: a balanced matching item needs a linked and an unlinked pair, so there is none;
    # and no question of either other kind is allowed.
    add_collection(storage, "demo", DEMO_PDFS[:2])
    nothing = {"max_buried": 0, "max_multi": 0, "max_matching": 4}

    result = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "demo",
        llm=LLMResource(data_dir=str(tmp_path / "data")),
        assets=UPSTREAM + INSIGHT_RAG,
        run_config={"ops": {**BRIEF_TRAINING, "insight_rag_benchmark": {"config": nothing}}},
    )

    assert result.success
    assert _rows(storage, "insight_rag_benchmark") == []
    has_items = check(result, "benchmark_has_items")
    assert not has_items.passed and has_items.severity.value == "WARN"
    assert "no benchmark item: every triple was dropped" in has_items.description
    assert "over the size limit" in has_items.description
    assert _rows(storage, "insight_rag_answers") == [] and _rows(storage, "insight_rag_scores") == []
    assert metadata(result, "insight_rag_answers")["dagster/row_count"] == 0
    assert "benchmark is empty" in metadata(result, "insight_rag_scores")["why_none"]


def _answerer_citing(citation: str):
    """The scripted model, except that an answer from retrieved passages also cites ``citation``:
    an alias it was not given, or a chunk it was not shown."""

    def model(request: Received) -> Reply:
        if request.body["messages"][0]["content"].startswith("Answer the question using the context"):
            return Reply(f"The first passage says so [S1]. So does another [{citation}].")
        return _model(request)

    return model


def test_the_citation_check_fails_when_a_writer_invents_an_alias_or_cites_a_chunk_not_given(
    instance, storage, hashing_embedder, tmp_path, server
):
    add_collection(storage, "demo", [p for p in DEMO_PDFS if p.name.startswith(("2020.acl", "N18"))])
    offline = LLMResource(data_dir=str(tmp_path / "data"))
    run_config = {
        "ops": {
            **BRIEF_TRAINING,
            "insight_rag_benchmark": {"config": {"max_buried": 2, "max_multi": 1, "max_matching": 1}},
            "insight_rag_answers": {"config": {"retriever_modes": ["index"], "rag_ks": [3]}},
        }
    }
    answers_only = {"ops": {"insight_rag_answers": run_config["ops"].pop("insight_rag_answers")}}
    materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "demo",
        llm=offline,
        assets=UPSTREAM + INSIGHT_RAG[:4],
        run_config=run_config,
    )

    server.responder = _answerer_citing("S99")
    invented = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "demo",
        llm=hosted_llm(server, tmp_path / "invents"),
        assets=[insight_rag_answers],
        run_config=answers_only,
    )
    failed = check(invented, "answers_cite_given_passages")
    assert not failed.passed and "cited sources it was not given" in failed.metadata["problems"].value

    chunk = _rows(storage, "chunks")[0]["chunk_id"]
    server.responder = _answerer_citing(chunk)
    # The first build's refused answers are on record and final: only --retry-failed builds it again.
    not_given = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "demo",
        llm=hosted_llm(server, tmp_path / "not_given", retry_failed=True),
        assets=[insight_rag_answers],
        run_config=answers_only,
    )
    failed = check(not_given, "answers_cite_given_passages")
    assert (
        not failed.passed
        and f"cites {chunk[:12]}, which it was not given" in failed.metadata["problems"].value
    )
