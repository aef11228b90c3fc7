"""SciPIP's assets on the demo collection: offline, and with a fake OpenAI server playing the model
(digests, entities, concise methods)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from insight_assets.core.methods.scipip.schemas import VARIANTS
from insight_assets.defs.citations import citations
from insight_assets.defs.ingestion import parsed_documents, source_documents
from insight_assets.defs.resources import LLMResource
from insight_assets.defs.scipip import keyword_graph, paper_summaries, scipip_retrievals
from insight_assets_tests.conftest import DEMO_COLLECTION, add_collection
from insight_assets_tests.defs.helpers import check, hosted_llm, materialize_collection, metadata
from insight_assets_tests.fake_model_server import Received, Reply

DEMO_PDFS = sorted(DEMO_COLLECTION.glob("*.pdf"))
UPSTREAM = [source_documents, parsed_documents, citations]
SCIPIP = [paper_summaries, keyword_graph, scipip_retrievals]


def _rows(storage, table: str) -> list[dict]:
    return storage.warehouse.rows(f"SELECT * FROM {table} WHERE collection = 'demo'")


def test_the_assets_build_offline_on_the_demo_with_a_users_backgrounds(
    instance, storage, hashing_embedder, tmp_path
):
    folder = add_collection(storage, "demo", DEMO_PDFS)
    (folder / "backgrounds.jsonl").write_text(
        json.dumps({"background": "1. The need to embed scientific papers for recommending citations."})
        + "\n"
        + json.dumps({"background": ""})
        + "\n"
    )

    result = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "demo",
        llm=LLMResource(data_dir=str(tmp_path / "data")),
        assets=UPSTREAM + SCIPIP,
    )

    papers = _rows(storage, "scipip_papers")
    assert len(papers) == len(DEMO_PDFS) and all(p["status"] == "ok" for p in papers)
    for paper in papers:
        assert paper["summary"].startswith("The problem of ") and paper["writer"].startswith("offline")
        assert paper["background"].startswith("1. ") and " 2. " in paper["background"]
        assert 0 < len(paper["keywords"]) <= 5 and all(2 <= len(k.split()) <= 5 for k in paper["keywords"])
    cited = {p["doc_id"]: set(p["cited_doc_ids"]) for p in papers}
    links = {(r["citing_doc_id"], r["cited_doc_id"]) for r in _rows(storage, "citations")}
    assert {(a, b) for a, bs in cited.items() for b in bs} == links and links

    edges = _rows(storage, "scipip_keyword_edges")
    assert {(e["doc_id"], e["keyword"]) for e in edges} == {
        (p["doc_id"], k) for p in papers for k in p["keywords"]
    }
    graph = metadata(result, "keyword_graph")
    assert graph["papers"] == len(papers) and Path(graph["graph_file"]).read_bytes().startswith(b"\x89PNG")

    retrieved = _rows(storage, "scipip_retrievals")
    assert {r["query_id"] for r in retrieved} and len({r["query_id"] for r in retrieved}) == 1
    assert sum(r["selected"] for r in retrieved) <= 10 and all(r["routes"] for r in retrieved)
    assert {route for r in retrieved for route in r["routes"]} >= {"semantic", "keyword"}
    assert not check(result, "backgrounds_readable").passed  # the empty background, reported

    recall = _rows(storage, "scipip_recall")
    held_out = {r["held_out"] for r in recall}
    assert held_out == {doc for doc, refs in cited.items() if refs}
    assert {r["variant"] for r in recall} == set(VARIANTS)
    for row in recall:
        assert row["held_out"] not in row["ranked"] and 0 <= row["recall"] <= 1
        assert row["relevant"] == len(cited[row["held_out"]])
    assert "skc+filter" in metadata(result, "scipip_retrievals")["recall_at_10"]


def _model(request: Received) -> Reply:
    """A scripted model: a digest naming the paper's title, two entities from its first words, a
    method that says it is the model's."""
    prompt = request.last_user_text()
    if prompt.startswith("You are provided with the title, abstract, and introduction"):
        title = re.search(r"^Title: (.*)$", prompt, re.MULTILINE).group(1)
        digest = {
            "summary": f"The problem of scripted tests can be addressed by {title}.",
            "motivations": ["Motivation one", "Motivation two"],
            "details": ["Detail one", "Detail two", "Detail three"],
        }
        return Reply(json.dumps(digest))
    if "extract the key entities" in prompt:
        return Reply(json.dumps({"entities": ["scripted entity", "shared test phrase"]}))
    if "summarized method" in prompt:
        return Reply(json.dumps({"method": "A scripted method."}))
    return Reply("unexpected prompt", output_tokens=1)


def test_a_model_summarizes_the_papers_through_the_openai_api(
    instance, storage, hashing_embedder, tmp_path, server
):
    server.responder = _model
    add_collection(storage, "demo", DEMO_PDFS[:3])
    offline = LLMResource(data_dir=str(tmp_path / "data"))
    materialize_collection(instance, storage, hashing_embedder, "demo", llm=offline, assets=UPSTREAM)

    result = materialize_collection(
        instance, storage, hashing_embedder, "demo", llm=hosted_llm(server, tmp_path), assets=SCIPIP
    )

    papers = _rows(storage, "scipip_papers")
    assert len(papers) == 3
    for paper in papers:
        assert paper["summary"] == f"The problem of scripted tests can be addressed by {paper['title']}."
        assert paper["background"] == "1. Motivation one. 2. Motivation two."
        assert paper["ideas"] == "1. Detail one. 2. Detail two. 3. Detail three."
        assert (
            paper["keywords"] == ["scripted entity", "shared test phrase"]
            and paper["method"] == "A scripted method."
        )
        assert paper["writer"] == "openai/gpt-4o-mini"
    assert metadata(result, "keyword_graph")["keywords_in_two_or_more_papers"] == 2
    calls = [r for r in server.requests if "messages" in r.body]
    assert all(r.body["temperature"] == 0 for r in calls)
    # three summary calls per paper, then one entities call per paper's background (leave-one-out)
    assert len(calls) == 3 * 3 + 3
