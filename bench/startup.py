"""startup: what a process pays before any work, each in fresh interpreters, side by side in one run.

- **definitions vs Dagster**: ``import insight_assets.definitions`` (every Dagster run worker, the
  UI's code server, every command that builds) against ``import dagster`` alone, the floor under it.
  Each is timed inside its own fresh interpreter (``time.perf_counter`` around the import), the two
  interleaved, ``ROUNDS`` rounds; the best of each counts, so a burst of load elsewhere hits both
  alike. The whole process (interpreter start to exit) is timed beside it.
- **commands**: ``insight-assets --help``, ``collections``, ``search --help`` and ``mcp --help`` as
  whole processes in a temporary project with the demo's folder, and the libraries each loaded:
  none of them needs Dagster, the embedder's stack, LanceDB or the PDF parser to start.

Our modules are byte-compiled first (``compileall``), as a second run of any command finds them:
a machine that sets ``PYTHONDONTWRITEBYTECODE`` would otherwise compile them from source on every
start, and Dagster's own came compiled from its wheel. Goal: definitions <= 1.5x Dagster.
"""

from __future__ import annotations

import compileall
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import REPO_ROOT, print_table, ratio, summary
from insight_assets.core.runtime.cores import machine_line

ROUNDS, QUICK_ROUNDS = 5, 3
TARGET = 1.5
# Each takes a tenth of a second or more to load, and a command that does not use it should not.
HEAVY = ("dagster", "torch", "lancedb", "pymupdf", "numpy", "pyarrow", "duckdb", "bpe_openai", "llama_cpp")
PROBE = """
import json, sys, time
started = time.perf_counter()
import {module}
seconds = time.perf_counter() - started
print(json.dumps({{"seconds": seconds}}))
"""
COMMANDS = {
    "--help": ["--help"],
    "collections": ["collections"],
    "search --help": ["search", "--help"],
    "mcp --help": ["mcp", "--help"],
}
LOADED = """
import json, runpy, sys
sys.argv = ["insight-assets", *{args!r}]
try:
    runpy.run_module("insight_assets.cli", run_name="__main__")
except SystemExit:
    pass
print("\\n" + json.dumps(sorted(set({heavy!r}) & set(sys.modules))), file=sys.stderr)
"""


def import_seconds(module: str) -> tuple[float, float]:
    """(seconds of the import inside the process, seconds of the whole process) in a fresh one."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)], capture_output=True, text=True, check=True
    )
    whole = time.perf_counter() - started
    return json.loads(done.stdout.splitlines()[-1])["seconds"], whole


def command(args: list[str], project: Path) -> tuple[float, list[str]]:
    """(seconds of the whole process, the heavy libraries it loaded) of ``insight-assets args``."""
    env = {**os.environ, "INSIGHT_ASSETS_PROJECT": str(project)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", LOADED.format(args=args, heavy=HEAVY)],
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        check=False,
    )
    seconds = time.perf_counter() - started
    return seconds, json.loads(done.stderr.strip().splitlines()[-1])


def run(corpus: Path, quick: bool) -> dict:
    print(f"  machine: {machine_line()}", flush=True)
    compileall.compile_dir(REPO_ROOT / "insight_assets", quiet=1)
    rounds = QUICK_ROUNDS if quick else ROUNDS
    times: dict[str, list[tuple[float, float]]] = {"dagster": [], "insight_assets.definitions": []}
    for _ in range(rounds):
        for module, runs in times.items():  # interleaved: a round measures both
            runs.append(import_seconds(module))
    best = {module: min(inner for inner, _ in runs) for module, runs in times.items()}
    best_whole = {module: min(whole for _, whole in runs) for module, runs in times.items()}
    imports = ratio(best["insight_assets.definitions"], best["dagster"])
    whole = ratio(best_whole["insight_assets.definitions"], best_whole["dagster"])
    print_table(
        [
            {"import": module, "best_s": best[module], "whole_process_s": best_whole[module]}
            for module in times
        ],
        ["import", "best_s", "whole_process_s"],
        title=f"imports, best of {rounds} interleaved, each in a fresh interpreter",
    )
    print(f"definitions / dagster: {imports:.2f}x inside the process (goal <= {TARGET}x), {whole:.2f}x whole")

    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        project = Path(tmp)
        demo = REPO_ROOT / "data" / "collections" / "scholarly-docs"
        (project / "data" / "collections").mkdir(parents=True)
        (project / "data" / "collections" / "scholarly-docs").symlink_to(demo)
        commands = []
        for name, args in COMMANDS.items():
            seconds = [command(args, project) for _ in range(rounds)]
            commands.append(
                {
                    "command": f"insight-assets {name}",
                    "best_s": min(s for s, _ in seconds),
                    "loads": seconds[0][1],
                }
            )
    print_table(
        [{**row, "loads": ", ".join(row["loads"]) or "none of them"} for row in commands],
        ["command", "best_s", "loads"],
        title=f"commands as whole processes, best of {rounds} (loads: which of {', '.join(HEAVY)})",
    )
    return {
        "summary": summary(
            f"definitions {best['insight_assets.definitions']:.2f} s, dagster {best['dagster']:.2f} s "
            f"({imports:.2f}x; whole processes {whole:.2f}x)",
            imports,
            f"<= {TARGET}x",
            imports is not None and imports <= TARGET,
        ),
        "machine": machine_line(),
        "rounds": rounds,
        "imports": {module: [list(run) for run in runs] for module, runs in times.items()},
        "best_import_s": best,
        "best_whole_process_s": best_whole,
        "commands": commands,
    }
