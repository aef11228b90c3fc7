"""The server as clients that no one here wrote see it: the official MCP conformance suite over HTTP,
and the official MCP Inspector's command line over stdio, starting the server as an assistant does.
Both need Node >= 22, which `./run test` installs from the npm registry with them (``.tools/``,
named by ``INSIGHT_ASSETS_MCP_TOOLS``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from insight_assets_tests.command_line import BuiltProject
from insight_assets_tests.servers import mcp_over_http

pytestmark = pytest.mark.long

TOOLS = "INSIGHT_ASSETS_MCP_TOOLS"
BASELINE = Path(__file__).parent / "data" / "mcp_conformance_baseline.yml"


def _tools() -> tuple[Path, dict[str, str]]:
    """The installed tools' folder and an environment whose ``node`` is the installed one."""
    named = os.environ.get(TOOLS)
    if not named:
        pytest.skip(f"the MCP conformance suite and Inspector come with `./run test` ({TOOLS} names them)")
    folder = Path(named)
    node = folder / "node" / "bin"
    if not (node / "node").is_file() or not (folder / "node_modules" / ".bin" / "conformance").is_file():
        pytest.fail(
            f"{TOOLS}={folder} holds no Node or no MCP tools: `./run test` said why it could not install them"
        )
    return folder, {**os.environ, "PATH": f"{node}:{os.environ['PATH']}", "HF_HUB_OFFLINE": "1"}


def test_the_official_conformance_suite_passes_every_scenario_that_applies(
    tmp_path, built_by_cli: BuiltProject
):
    tools, environment = _tools()
    project = built_by_cli.copy(tmp_path)
    results = tmp_path / "results"
    with mcp_over_http(project, environment) as (url, _):
        suite = subprocess.run(
            [
                str(tools / "node_modules" / ".bin" / "conformance"),
                "server",
                "--url",
                url,
                "--expected-failures",
                str(BASELINE),
                "--output-dir",
                str(results),
            ],
            env=environment,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    summary = suite.stdout[suite.stdout.rfind("=== SUMMARY ===") :]
    # Exit 0: every scenario passed but the baseline's, and each of those still fails.
    assert suite.returncode == 0, summary or suite.stderr[-3000:]
    checks = [check for found in results.glob("*/checks.json") for check in json.loads(found.read_text())]
    passed = {check["id"] for check in checks if check["status"] == "SUCCESS"}
    assert {
        "server-initialize",
        "tools-list",
        "tools-call-error",
        "completion-complete",
        "logging-set-level",
    } <= passed


def _inspector(
    tools: Path, environment: dict[str, str], project: Path, *arguments: str
) -> subprocess.CompletedProcess:
    """The Inspector's CLI, starting ``insight-assets mcp`` over stdio as a client's configuration does."""
    server = [sys.executable, "-m", "insight_assets.cli", "mcp", "--project", str(project)]
    return subprocess.run(
        [str(tools / "node_modules" / ".bin" / "mcp-inspector"), "--cli", *server, *arguments],
        # Its catalog of servers beside the project, not in the home folder.
        env={**environment, "MCP_CATALOG_PATH": str(project / "inspector-catalog.json")},
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_inspector_started_as_a_client_starts_the_server_gets_search_results_within_its_timeout(
    tmp_path, built_by_cli: BuiltProject
):
    tools, environment = _tools()
    project = built_by_cli.copy(tmp_path)
    # A fresh server for each call: the first search must come back within the Inspector's
    # default request timeout (10 s), model and collection loaded from nothing.
    searched = _inspector(
        tools, environment, project,
        "--method", "tools/call", "--tool-name", "search",
        "--tool-arg", "query=citation graph", "--tool-arg", "collection=tiny",
    )  # fmt: skip
    assert searched.returncode == 0, searched.stderr[-3000:]
    found = json.loads(searched.stdout)
    assert not found.get("isError"), found
    results = found["structuredContent"]["results"]
    assert results and all(result["id"].startswith("tiny/") and result["pages"] for result in results)

    refused = _inspector(
        tools, environment, project,
        "--method", "tools/call", "--tool-name", "search",
        "--tool-arg", "query=x", "--tool-arg", "collection=../../etc",
    )  # fmt: skip
    answer = json.loads(refused.stdout)
    assert answer["isError"] and "refused: it contains a path separator" in answer["content"][0]["text"]
