"""A collection built from the command line through a hosted model (the stand-in behind a fake
OpenAI-compatible server): steps side by side, calls as many at once as the provider allows, a
rebuild that pays for nothing."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from insight_assets.defs.pools import LLM_POOL
from insight_assets_tests.command_line import SMALLEST_DEMO_PDF, run_cli
from insight_assets_tests.fake_model_server import FakeModelServer
from insight_assets_tests.standin_model import StandInModel


def _lines_starting(text: str, *starts: str) -> list[int]:
    """The number of the first line holding each of ``starts``."""
    lines = text.splitlines()
    return [next(number for number, line in enumerate(lines) if start in line) for start in starts]


def _pool_limit(home: Path) -> int:
    with dg.DagsterInstance.from_config(str(home)) as instance:
        return instance.event_log_storage.get_concurrency_info(LLM_POOL).slot_count


def _tiny_hosted_project(tmp_path: Path, latency_s: float) -> tuple[FakeModelServer, StandInModel, dict]:
    """A collection of the smallest demo paper, the stand-in behind a started server, and the
    environment that builds through it."""
    folder = tmp_path / "data" / "collections" / "tiny"
    folder.mkdir(parents=True)
    shutil.copy(SMALLEST_DEMO_PDF, folder)
    server = FakeModelServer().start()
    model = server.responder = StandInModel(server, latency_s=latency_s)
    hosted = {
        "INSIGHT_ASSETS_LLM_PROVIDER": "openai-compatible",
        "INSIGHT_ASSETS_LLM_MODEL": "stand-in",
        "INSIGHT_ASSETS_LLM_BASE_URL": f"{server.url}/v1",
    }
    return server, model, hosted


def _method_spans(ledger_path: Path, asset: str) -> dict[str, tuple[float, float]]:
    """When each method's calls for ``asset`` went out, first start to last end, by the method
    its task names start with (``scipip_``, ``insight_rag_``, ...)."""
    with sqlite3.connect(ledger_path) as ledger:
        rows = ledger.execute(
            "SELECT task, created_at - latency_s, created_at FROM calls WHERE asset = ? AND cache_hit = 0",
            (asset,),
        ).fetchall()
    spans: dict[str, tuple[float, float]] = {}
    for task, started, ended in rows:
        method = next((m for m in ("scipip", "insight_rag", "contregen", "xsum") if task.startswith(m)), None)
        if method is not None:
            first, last = spans.get(method, (started, ended))
            spans[method] = (min(first, started), max(last, ended))
    return spans


def _overlapping(spans: dict[str, tuple[float, float]]) -> bool:
    """Whether two methods' calls were out at the same time (one after another, none is)."""
    ordered = sorted(spans.values())
    return any(later[0] < earlier[1] for earlier, later in itertools.pairwise(ordered))


@pytest.mark.long
def test_a_hosted_build_runs_steps_side_by_side_and_its_rebuild_costs_no_call(tmp_path):
    server, model, hosted = _tiny_hosted_project(tmp_path, latency_s=0.3)
    try:
        built = run_cli(tmp_path, "build", "-c", "tiny", environment=hosted)
        calls, answered = len(server.requests), model.answered
        most = server.max_in_flight
        again = run_cli(tmp_path, "build", "-c", "tiny", environment=hosted)
        after_rebuild = len(server.requests)
        asked = run_cli(
            tmp_path,
            "ask",
            "-c",
            "tiny",
            "--method",
            "all",
            "What do readers need from a paper's figures?",
            environment=hosted,
        )
    finally:
        server.stop()

    assert built.returncode == 0, built.stderr[-3000:]
    # What needs no model ran first, in a run of its own; then the plan was shown; then every other
    # step ran, each in a process of its own, their debug lines off the terminal.
    first, plan, budget, rest = _lines_starting(
        built.stdout, "7 step(s) built", "Plan:", "Budget:", "26 step(s) built"
    )
    assert first < plan < budget < rest
    planned = int(
        re.search(r"Plan: ([\d,]+) model calls to make, [\d,]+ answered", built.stdout)[1].replace(",", "")
    )
    assert " - DEBUG - " not in built.stderr
    assert calls == answered > 100
    assert 0.5 < planned / calls < 2.0  # the offline answers' chain, not the stand-in's
    # Every step is priced, those that search what the model's earlier steps make (Insight-RAG's
    # triples, SciPIP's summaries) on what the plan itself made of them.
    assert "Not in the plan" not in built.stdout
    with sqlite3.connect(tmp_path / "data" / "cache" / "llm_ledger.sqlite") as ledger:
        (runs,) = ledger.execute("SELECT count(DISTINCT run_id) FROM calls").fetchone()
    assert runs == 1  # no call before the plan: the first run asked nothing
    # More calls at once than the old cap of 4, never more than the provider's 16.
    assert 4 < most <= 16
    with sqlite3.connect(tmp_path / "data" / "cache" / "llm_ledger.sqlite") as ledger:
        (assets,) = ledger.execute("SELECT count(DISTINCT asset) FROM calls WHERE cache_hit = 0").fetchone()
    assert assets >= 10
    # The pool of model-calling steps lets 4 run at once while the provider is hosted.
    assert _pool_limit(tmp_path / "home") == 4

    assert again.returncode == 0, again.stderr[-3000:]
    assert "Nothing changed since the last build: no model call is planned." in again.stdout
    assert "32 reused" in again.stdout and after_rebuild == calls

    # A new question from the command line goes to the methods side by side: at least two
    # methods' calls were out at the same time (one after another, none would be). Whether each
    # could answer is the stand-in's doing (XSum's questions may all abstain): not asserted here.
    assert "[5/5]" in asked.stdout + asked.stderr, asked.stderr[-3000:]
    every = _method_spans(tmp_path / "data" / "cache" / "llm_ledger.sqlite", "ask")
    assert len(every) >= 2 and _overlapping(every), every

    # What ./run does before the UI starts, with the model switched to one loaded here: one step again.
    environment = {
        **os.environ,
        "DAGSTER_HOME": str(tmp_path / "home"),
        "INSIGHT_ASSETS_LLM_PROVIDER": "local",
    }
    configured = subprocess.run(
        [sys.executable, "-m", "insight_assets.app.instance"],
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert configured.returncode == 0, configured.stderr
    assert _pool_limit(tmp_path / "home") == 1


def test_a_pool_limit_the_user_set_is_left_alone(tmp_path):
    from insight_assets.app import llm_steps

    hosted = {"INSIGHT_ASSETS_LLM_PROVIDER": "openai"}
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        instance.event_log_storage.set_concurrency_slots(
            LLM_POOL, 2
        )  # dagster instance concurrency set llm 2

        note = llm_steps.size_llm_pool(instance, tmp_path, hosted)

        assert instance.event_log_storage.get_concurrency_info(LLM_POOL).slot_count == 2
        assert "allows 2 step(s) at once" in note and "set llm 4" in note
        assert llm_steps.wanted_steps({**hosted, llm_steps.STEPS_ENV: "8"}) == 8
        with pytest.raises(ValueError, match="number of steps"):
            llm_steps.wanted_steps({**hosted, llm_steps.STEPS_ENV: "many"})


@pytest.mark.long
def test_a_plan_that_cannot_be_made_stops_the_build_before_any_call_and_says_why(tmp_path):
    server, _, hosted = _tiny_hosted_project(tmp_path, latency_s=0.0)
    hosted["INSIGHT_ASSETS_LLM_BUDGET_USD"] = "free"
    try:
        built = run_cli(tmp_path, "build", "-c", "tiny", environment=hosted)
    finally:
        server.stop()

    assert built.returncode == 1
    assert "7 step(s) built" in built.stdout  # what needs no model was built
    assert (
        "The plan could not be made (ConfigurationError: INSIGHT_ASSETS_LLM_BUDGET_USD must be an amount "
        "of US dollars above 0, not 'free'); nothing was asked of the model."
    ) in built.stderr
    assert "Traceback" not in built.stderr
    assert server.requests == []
