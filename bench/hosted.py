"""hosted: collections built through a hosted model that takes a second a call, as a researcher pays
for one: calls made, wall time, calls in flight; what a paper added or removed costs; the plan
against the bill.

The model is the stand-in (``insight_assets_tests/standin_model.py``) behind the fake
OpenAI-compatible server on 127.0.0.1, answering each call after ``LATENCY_S`` (``--quick``: 0.2 s)
with a reply valid against the schema the request carries. Every build is ``insight-assets build``
in a fresh process with the provider ``openai-compatible``, in a temporary project of its own. The
figures, all from one run:

- the demo with the limits of before (4 calls at once, one model-calling step at a time:
  ``INSIGHT_ASSETS_LLM_CONCURRENCY=4 INSIGHT_ASSETS_LLM_STEPS=1``) and with the defaults (16 calls, 4
  steps): calls, wall time, the most calls in flight and the effective concurrency (the mean number
  in flight over the time at least one was; target: 80% of the 16), as the server counts them;
- a ten-paper collection of the corpus built, then with one paper added (target: at most 25% of
  its build's calls), with it removed again (at most 2%), and with nothing changed (0), each per
  asset: calls made and answers reused from the cache;
- the plan each build printed before its first call against the calls it made.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import REPO_ROOT, pdfs, print_table, ratio, summary
from insight_assets_tests.fake_model_server import FakeModelServer
from insight_assets_tests.standin_model import StandInModel

LATENCY_S = 1.0
QUICK_LATENCY_S = 0.2
DEMO = REPO_ROOT / "data" / "collections" / "scholarly-docs"
TEN_PAPERS = "nlp-information-extraction"
ADDED_FROM = "scholarly-document-processing"
OLD_LIMITS = {"INSIGHT_ASSETS_LLM_CONCURRENCY": "4", "INSIGHT_ASSETS_LLM_STEPS": "1"}
# The hosted default of calls in flight (``core/llm/settings.py``): the builds with the defaults
# should reach it, and keep at least 80% of it busy while calls are pending.
LIMIT = 16


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Project:
    """A temporary project folder: collections, stores, a Dagster home; builds through ``server``."""

    def __init__(self, root: Path, server: FakeModelServer):
        self.root = root
        self.server = server
        (root / "home").mkdir(parents=True)
        (root / "data" / "collections").mkdir(parents=True)

    def collection(self, name: str, files: list[Path]) -> Path:
        folder = self.root / "data" / "collections" / name
        folder.mkdir()
        for path in files:
            (folder / path.name).symlink_to(path.resolve())
        return folder

    def environment(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {
            **os.environ,
            "DAGSTER_HOME": str(self.root / "home"),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "INSIGHT_ASSETS_LLM_PROVIDER": "openai-compatible",
            "INSIGHT_ASSETS_LLM_MODEL": "stand-in",
            "INSIGHT_ASSETS_LLM_BASE_URL": f"{self.server.url}/v1",
            **(extra or {}),
        }

    def cli(self, *args: str, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "insight_assets.cli", *args],
            cwd=self.root,
            env=self.environment(extra),
            capture_output=True,
            text=True,
            check=False,
        )

    def build(self, name: str, label: str, extra: dict[str, str] | None = None) -> dict:
        """One build's figures, from the server's counts and the ledger rows it added."""
        before = self._ledger_rows()
        requests = len(self.server.requests)
        self.server.max_in_flight = 0
        self.server.busy_s = self.server.flight_s = 0.0
        started = time.perf_counter()
        done = self.cli("build", "-c", name, extra=extra)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(f"{label}: the build failed:\n{done.stderr[-3000:]}")
        plan = re.search(r"Plan: ([\d,]+) model calls to make", done.stdout)
        rows = self._ledger_rows()[len(before) :]
        per_asset: dict[str, list[int]] = {}
        for asset, cache_hit in rows:
            made, reused = per_asset.setdefault(asset, [0, 0])
            per_asset[asset] = [made + (not cache_hit), reused + bool(cache_hit)]
        return {
            "build": label,
            "calls": len(self.server.requests) - requests,
            "reused": sum(reused for _, reused in per_asset.values()),
            "wall_s": round(wall, 1),
            "most_in_flight": self.server.max_in_flight,
            "effective": round(self.server.effective_concurrency, 2),
            "per_asset": per_asset,
            # The calls the build said it would make, before its first one (none: nothing changed).
            "planned": int(plan[1].replace(",", "")) if plan else 0,
        }

    def _ledger_rows(self) -> list[tuple[str, int]]:
        path = self.root / "data" / "cache" / "llm_ledger.sqlite"
        if not path.exists():
            return []
        with sqlite3.connect(path) as ledger:
            return ledger.execute("SELECT asset, cache_hit FROM calls ORDER BY rowid").fetchall()


def _per_asset_rows(results: list[dict]) -> list[dict]:
    assets = sorted({asset for result in results for asset in result["per_asset"]})
    rows = []
    for asset in assets:
        row = {"asset": asset}
        for result in results:
            made, reused = result["per_asset"].get(asset, [0, 0])
            row[result["build"]] = f"{made} / {reused}"
        rows.append(row)
    return rows


def _record(results: list[dict], result: dict) -> None:
    """Keep a build's figures, and print them now: a later build that fails loses none of them."""
    results.append(result)
    figures = {key: value for key, value in result.items() if key != "per_asset"}
    print(f"built: {figures}", flush=True)


def _plan_ratio(result: dict) -> float | None:
    return ratio(result["planned"], result["calls"]) if result["calls"] else None


def run(corpus: Path, quick: bool) -> dict:
    latency = QUICK_LATENCY_S if quick else LATENCY_S
    # A fixed port for the whole run: an openai-compatible model's cache keys hold its URL.
    server = FakeModelServer(port=_free_port()).start()
    server.responder = StandInModel(server, latency_s=latency)
    results: list[dict] = []
    scratch = Path(tempfile.mkdtemp(prefix="bench-hosted-"))
    try:
        demo_files = pdfs(DEMO)
        before = Project(scratch / "demo-before", server)
        before.collection("demo", demo_files)
        _record(results, before.build("demo", "demo, 4 calls / 1 step", OLD_LIMITS))
        after = Project(scratch / "demo", server)
        after.collection("demo", demo_files)
        _record(results, after.build("demo", "demo, defaults"))

        ten = sorted(pdfs(corpus / TEN_PAPERS))[:10]
        added = next(
            path for path in sorted(pdfs(corpus / ADDED_FROM)) if path.name not in {p.name for p in ten}
        )
        if quick:
            ten, added = demo_files[:4], demo_files[4]
        project = Project(scratch / "ten", server)
        folder = project.collection("ten", ten)
        _record(results, project.build("ten", "10 papers"))
        (folder / added.name).symlink_to(added.resolve())
        _record(results, project.build("ten", "+1 paper"))
        (folder / added.name).unlink()
        _record(results, project.build("ten", "-1 paper"))
        _record(results, project.build("ten", "no change"))
    finally:
        server.stop()
        shutil.rmtree(scratch, ignore_errors=True)

    print_table(
        [{key: value for key, value in result.items() if key != "per_asset"} for result in results],
        ["build", "calls", "reused", "wall_s", "most_in_flight", "effective"],
        title=f"Builds through the stand-in at {latency} s a call (2 cores; calls as the server counted them)",
    )
    print_table(
        _per_asset_rows(results[2:]),
        ["asset", *(result["build"] for result in results[2:])],
        title="Calls made / answers reused from the cache, per asset",
    )
    base, grown, shrunk, same = (result["calls"] for result in results[2:])
    share, undo = ratio(grown, base), ratio(shrunk, base)
    print_table(
        [
            {
                "build": result["build"],
                "planned": result["planned"],
                "made": result["calls"],
                "ratio": _plan_ratio(result) or "-",
            }
            for result in results
        ],
        ["build", "planned", "made", "ratio"],
        title="The plan each build printed before its first call, against the calls it made",
    )
    speedup = ratio(results[0]["wall_s"], results[1]["wall_s"])
    met = (
        results[1]["most_in_flight"] >= LIMIT
        and all(result["effective"] >= 0.8 * LIMIT for result in (results[1], results[2]))
        and share is not None
        and share <= 0.25
        and undo is not None
        and undo <= 0.02
        and same == 0
        and all(0.9 <= (_plan_ratio(result) or 0) <= 1.1 for result in (results[1], results[2]))
    )
    return {
        "latency_s": latency,
        "builds": results,
        "summary": summary(
            f"demo {results[1]['wall_s']} s ({results[0]['wall_s']} s before), +1 paper {share:.0%} of the "
            f"calls, -1 {undo:.0%}, no change {same}; plan {results[2]['planned']} vs {base} made, "
            f"+1 paper plan {results[3]['planned']} vs {grown}",
            speedup,
            "+1 <= 25%, -1 <= 2%, 0, 16 in flight, effective >= 80% of 16, plans within 10%",
            met,
        ),
    }
