"""``insight-assets mcp`` as an assistant meets it: the official SDK's client, over stdio (the server
a process of its own) and over streamable HTTP on a free port of 127.0.0.1, on a project whose
collection `insight-assets build` built."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import duckdb
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from insight_assets_tests.command_line import SMALLEST_DEMO_PDF, BuiltProject
from insight_assets_tests.fake_model_server import FakeModelServer
from insight_assets_tests.servers import free_port, wait_for_port

TOOLS = {
    "list_collections",
    "search",
    "fetch",
    "ask",
    "summarize",
    "propose_ideas",
    "collection_report",
    "what_changed",
}
TOKEN = "a-secret-for-this-test"


def _text(result) -> str:
    return "\n".join(block.text for block in result.content)


def _stdio(project: Path) -> Client:
    """A client of the server that an assistant's configuration starts: the command, its
    arguments, and the project folder named by ``--project`` (clients start it from anywhere)."""
    command = [sys.executable, "-m", "insight_assets.cli", "mcp", "--project", str(project)]
    environment = {"HF_HUB_OFFLINE": "1", "PATH": os.environ["PATH"]}
    return Client(StdioServerParameters(command=command[0], args=command[1:], env=environment, cwd="/"))


def _not_built_collection(project: Path) -> None:
    folder = project / "data" / "collections" / "unbuilt"
    folder.mkdir()
    (folder / SMALLEST_DEMO_PDF.name).write_bytes(SMALLEST_DEMO_PDF.read_bytes())


def test_an_assistant_over_stdio_searches_asks_and_is_told_what_it_cannot_have(
    tmp_path, built_by_cli: BuiltProject
):
    project = built_by_cli.copy(tmp_path)
    _not_built_collection(project)
    # One method that cannot answer: SciPIP's library emptied (its papers' summaries).
    with duckdb.connect(str(project / "data" / "warehouse.duckdb")) as warehouse:
        warehouse.execute("DELETE FROM scipip_papers WHERE collection = 'tiny'")

    before = {path.relative_to(project) for path in project.rglob("*")}

    async def session():
        async with _stdio(project) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools) == TOOLS
            assert "collection" in tools["search"].input_schema["properties"]

            listed = await client.call_tool("list_collections", {})
            (tiny,) = [c for c in listed.structured_content["collections"] if c["name"] == "tiny"]
            assert tiny["papers"] == 1 and {"ingestion", "insightgen", "contregen"} <= set(tiny["built"])
            assert tiny["page"].endswith("tiny/index.html")

            found = await client.call_tool(
                "search", {"collection": "tiny", "query": "citation graph", "k": 3}
            )
            assert not found.is_error, _text(found)
            passages = found.structured_content["results"]
            assert len(passages) == 3
            assert all(p["title"].startswith("Construction of the Literature Graph") for p in passages)
            assert all(
                p["pages"].startswith(("p. ", "pp. ")) and p["id"].startswith("tiny/") for p in passages
            )
            assert all(p["url"].startswith("file:///") and "#page=" in p["url"] for p in passages)
            assert passages[0]["citation"] == f"{passages[0]['title']}, {passages[0]['pages']}"
            assert passages[0]["citation"] in _text(found)  # the text is the same JSON, for text-only clients
            everywhere = await client.call_tool("search", {"query": "citation graph", "k": 3})
            assert [p["id"] for p in everywhere.structured_content["results"]] == [p["id"] for p in passages]
            await _fetches_a_passage_whole(client, passages[0])

            for method in ("insightgen", "contregen"):
                asked = await client.call_tool(
                    "ask", {"collection": "tiny", "question": "How are papers linked?", "method": method}
                )
                assert not asked.is_error, _text(asked)
                (answer,) = asked.structured_content["methods"]
                assert answer["method"] == method and answer["error"] is None
                assert answer["answer"]["citations"] and "model calls" in _text(asked)
                # Each cited passage: its id, quoted words and pages, and fetch reads it back.
                cited = answer["answer"]["passages"][0]
                assert cited["quote"] and cited["pages"] and cited["citation"].startswith(cited["title"])
                fetched = await client.call_tool("fetch", {"id": cited["id"]})
                assert fetched.structured_content["text"] == cited["quote"]
            tree = answer["answer"]
            assert any(citation["pages"] for citation in tree["citations"])

            every = await client.call_tool(
                "ask", {"collection": "tiny", "question": "How are papers linked?", "method": "all"}
            )
            methods = {m["method"]: m for m in every.structured_content["methods"]}
            assert len(methods) == 5 and methods["scipip"]["answer"] is None
            assert "no summarized paper" in methods["scipip"]["error"]
            assert methods["insightgen"]["answer"] and methods["xsum"]["answer"]
            assert "scipip could not answer: " in _text(every) and not every.is_error

            summary = await client.call_tool(
                "summarize", {"collection": "tiny", "topic": "literature graphs"}
            )
            assert not summary.is_error and "Summary (offline (extractive)):" in _text(summary)
            (cited,) = summary.structured_content["methods"][0]["answer"]["citations"]
            assert cited["title"].startswith("Construction of the Literature Graph") and cited["pages"]
            # A method that cannot answer, asked alone: a tool error saying why.
            ideas = await client.call_tool(
                "propose_ideas", {"collection": "tiny", "background": "Linking papers."}
            )
            assert ideas.is_error and "scipip could not answer: no summarized paper" in _text(ideas)

            report = await client.call_tool("collection_report", {"collection": "tiny"})
            assert report.structured_content["page"].endswith("tiny/index.html")
            assert {r["report"] for r in report.structured_content["reports"]} >= {"xsum_report.md"}

            resources = [str(r.uri) for r in (await client.list_resources()).resources]
            assert "insight-assets://tiny/reports/xsum_report.md" in resources
            read = await client.read_resource("insight-assets://tiny/reports/xsum_report.md")
            assert read.contents[0].text.startswith("#")

            for arguments, said in (
                ({"collection": "../etc", "query": "x"}, "refused: it contains a path separator"),
                ({"collection": ".hidden", "query": "x"}, "refused: it starts with '.'"),
                ({"collection": "nowhere", "query": "x"}, "No folder for collection 'nowhere'"),
                ({"collection": "unbuilt", "query": "x"}, "insight-assets build --collection unbuilt"),
                ({"collection": "tiny", "query": "x", "mode": "fuzzy"}, "unknown search mode"),
                ({"collection": "tiny", "query": "  "}, "the query is empty"),
                ({"collection": "tiny", "query": "x", "k": 0}, "k"),
                ({"collection": "tiny", "query": "x", "k": 51}, "k"),
            ):
                refused = await client.call_tool("search", arguments)
                assert refused.is_error and said in _text(refused), _text(refused)
            unknown = await client.call_tool(
                "ask", {"collection": "tiny", "question": "q", "method": "guess"}
            )
            assert unknown.is_error and "choose one of insightgen" in _text(unknown)

    anyio.run(session)
    written = {path.relative_to(project) for path in project.rglob("*")} - before
    assert all(path.parts[0] == "data" for path in written), written  # the model cache, the ledger


async def _fetches_a_passage_whole(client: Client, passage: dict) -> None:
    """``fetch`` of a passage ``search`` found: its words whole, its neighbours and its paper; an id
    that is not one, or that names no passage, is a tool error saying so."""
    fetched = await client.call_tool("fetch", {"id": passage["id"]})
    assert not fetched.is_error, _text(fetched)
    document = fetched.structured_content
    assert document["id"] == passage["id"] and document["text"] == passage["quote"]
    assert document["title"] == passage["title"] and document["url"] == passage["url"]
    metadata = document["metadata"]
    assert metadata["citation"] == passage["citation"]
    assert metadata["paper"]["pdf"].endswith(".pdf") and metadata["paper"]["title"] == passage["title"]
    assert len(metadata["before"]) + len(metadata["after"]) >= 1
    for neighbour in metadata["before"] + metadata["after"]:
        assert neighbour["id"] != passage["id"] and neighbour["quote"]
    for wrong, said in (
        ("citation graph", "is not a passage id"),
        ("tiny/0123456789abcdef", "collection 'tiny' has no passage '0123456789abcdef'"),
        ("nowhere/0123456789abcdef", "No folder for collection 'nowhere'"),
    ):
        refused = await client.call_tool("fetch", {"id": wrong})
        assert refused.is_error and said in _text(refused), _text(refused)


def test_over_http_a_token_is_required_and_a_call_over_the_spending_limit_returns_its_estimate(
    tmp_path, built_by_cli: BuiltProject
):
    project = built_by_cli.copy(tmp_path)
    command = [sys.executable, "-m", "insight_assets.cli", "mcp", "--http"]
    # Another address than loopback without a token: refused before anything starts.
    open_to_all = subprocess.run(
        [*command, "--host", "0.0.0.0"],
        cwd=project,
        env={k: v for k, v in os.environ.items() if k != "INSIGHT_ASSETS_MCP_TOKEN"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert open_to_all.returncode == 2 and "INSIGHT_ASSETS_MCP_TOKEN" in open_to_all.stderr

    model = FakeModelServer().start()  # a priced hosted model; it must never be called
    port = free_port()
    environment = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "INSIGHT_ASSETS_MCP_TOKEN": TOKEN,
        "INSIGHT_ASSETS_LLM_PROVIDER": "openai",
        "INSIGHT_ASSETS_LLM_MODEL": "gpt-4o-mini",
        "INSIGHT_ASSETS_LLM_BASE_URL": f"{model.url}/v1",
        "OPENAI_API_KEY": "sk-test",
    }
    server = subprocess.Popen(
        [*command, "--port", str(port), "--max-cost", "0.000001"],
        cwd=project,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_for_port(port, server)
        hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            refused = httpx2.post(url, json=hello, headers={"Accept": "application/json", **headers})
            assert refused.status_code == 401 and "INSIGHT_ASSETS_MCP_TOKEN" in refused.text

        async def session():
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=300)) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS
                found = await client.call_tool("search", {"collection": "tiny", "query": "entity linking"})
                assert not found.is_error and found.structured_content["results"], _text(found)
                asked = await client.call_tool(
                    "ask",
                    {"collection": "tiny", "question": "How are papers linked?", "method": "insightgen"},
                )
                assert not asked.is_error, _text(asked)
                assert _text(asked).startswith("Not run: answering would cost up to $")
                estimate = asked.structured_content
                assert estimate["ran"] is False and estimate["estimated_max_cost_usd"] > 0.000001
                assert any(task["task"].startswith("generate_insights") for task in estimate["tasks"])

        anyio.run(session)
        assert model.requests == []  # the estimate was returned; no model was called
    finally:
        server.terminate()
        server.wait(timeout=60)
        model.stop()


def test_a_client_configuration_snippet_in_the_docs_starts_the_server():
    """The JSON an MCP client is given in the docs names this command and its arguments."""
    docs = Path(__file__).parents[1] / "docs" / "mcp.md"
    snippet = docs.read_text().split("```json\n", 1)[1].split("```", 1)[0]
    server = json.loads(snippet)["mcpServers"]["insight-assets"]
    assert server["args"][:1] == ["mcp"] and "--project" in server["args"]
