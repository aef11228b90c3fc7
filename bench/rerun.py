"""rerun: the demo built by ``insight-assets build`` in a new process, then built again with nothing
changed, beside Dagster's own floor: a job of as many steps that do nothing, run the same way.

Both builds run the CLI in a fresh process on a temporary copy of the demo (a data folder and a
Dagster home of its own) with the README's defaults (the offline model, the bundled embedder), so a
build's seconds include Python's start, the imports and loading the definitions. The floor is a fresh
process that imports dagster and materializes, in process, a partitioned chain of as many assets as
the build has steps, each returning at once, into a Dagster home of its own: what any rebuild of
that many steps costs before it reads anything. The rebuild must do no work: every step but
``source_documents`` (which scans the folder each time) reports ``reused``, the ledger records no
model call (offline ones included) and no table changes. Target: the rebuild <= 30 s on 2 cores.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from bench.common import REPO_ROOT, print_table, ratio, summary

COLLECTION = "scholarly-docs"
DEMO = REPO_ROOT / "data" / "collections" / COLLECTION
TARGET_S = 30.0
# Stays in the folder: the demo's own papers, whichever corpus is given.
QUICK_FILES = 2

FLOOR = """
import sys
import dagster as dg

steps = int(sys.argv[1])
partitions = dg.DynamicPartitionsDefinition(name="collection")
assets = []
for number in range(steps):
    @dg.asset(name=f"step_{number}", partitions_def=partitions, deps=assets[-1:])
    def step(context):
        return dg.MaterializeResult(metadata={"dagster/row_count": 0})
    assets.append(step)
with dg.DagsterInstance.get() as instance:
    instance.add_dynamic_partitions("collection", ["demo"])
    dg.materialize(assets, partition_key="demo", instance=instance)
"""


def _environment(project: Path) -> dict[str, str]:
    return {**os.environ, "DAGSTER_HOME": str(project / "data" / "dagster_home"), "PYTHONWARNINGS": "ignore"}


def _timed_process(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    completed = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if completed.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} failed:\n{completed.stdout[-2000:]}{completed.stderr[-3000:]}"
        )
    return seconds


def _build(project: Path) -> float:
    command = [sys.executable, "-m", "insight_assets.cli", "build", "--collection", COLLECTION]
    return _timed_process(command, project, _environment(project))


def _ledger_calls(project: Path) -> int:
    with sqlite3.connect(project / "data" / "cache" / "llm_ledger.sqlite") as ledger:
        return ledger.execute("SELECT count(*) FROM calls").fetchone()[0]


def _tables_digest(project: Path) -> str:
    """A digest of every warehouse table's rows but the build notes (``asset_builds``, which the
    folder scan rewrites with its run's id)."""
    digest = hashlib.sha256()
    with duckdb.connect(str(project / "data" / "warehouse.duckdb"), read_only=True) as db:
        tables = [
            row[0] for row in db.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()
        ]
        for table in tables:
            if table == "asset_builds":
                continue
            rows = db.execute(f"SELECT * FROM {table}").fetchall()
            digest.update(table.encode())
            digest.update(repr(sorted(map(repr, rows))).encode())
    return digest.hexdigest()[:16]


def _last_run_steps(project: Path) -> dict[str, str]:
    """Each asset of the last run and its ``build`` metadata (built, or reused and why)."""
    code = """
import json, dagster as dg
with dg.DagsterInstance.get() as instance:
    run = instance.get_runs(limit=1)[0]
    found = {}
    for record in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION):
        materialization = record.dagster_event.event_specific_data.materialization
        build = materialization.metadata.get("build")
        found[materialization.asset_key.to_user_string()] = build.value if build else ""
    print(json.dumps(found))
"""
    completed = subprocess.run(
        [sys.executable, "-c", code],
        cwd=project,
        env=_environment(project),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def _floor(steps: int) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as home:
        return _timed_process(
            [sys.executable, "-c", FLOOR, str(steps)], Path(home), {**os.environ, "DAGSTER_HOME": home}
        )


def run(corpus: Path, quick: bool) -> dict:
    files = sorted(DEMO.glob("*.pdf"))
    if quick:
        files = sorted(files, key=lambda path: path.stat().st_size)[:QUICK_FILES]
    with tempfile.TemporaryDirectory(prefix="bench-rerun-") as tmp:
        project = Path(tmp)
        folder = project / "data" / "collections" / COLLECTION
        folder.mkdir(parents=True)
        for path in files:
            shutil.copyfile(path, folder / path.name)
        first = _build(project)
        calls, tables = _ledger_calls(project), _tables_digest(project)
        rebuild = _build(project)
        steps = _last_run_steps(project)
        new_calls = _ledger_calls(project) - calls
        same_tables = _tables_digest(project) == tables
    floor = _floor(len(steps))
    built = sorted(name for name, build in steps.items() if not build.startswith("reused"))
    rows = [
        {"run": "first build", "seconds": first, "steps": len(steps)},
        {
            "run": "no-change rebuild",
            "seconds": rebuild,
            "steps": len(steps),
            "reused": len(steps) - len(built),
            "model_calls": new_calls,
            "tables_same": same_tables,
        },
        {"run": f"Dagster floor ({len(steps)} no-op steps)", "seconds": floor, "steps": len(steps)},
    ]
    print_table(
        rows,
        ["run", "seconds", "steps", "reused", "model_calls", "tables_same"],
        title=f"rerun: {COLLECTION}, {len(files)} PDFs, `insight-assets build` in a new process each time",
    )
    print(f"steps built on the rebuild: {', '.join(built) or 'none'}")
    share = ratio(rebuild, first)
    nothing_done = built == ["source_documents"] and new_calls == 0 and same_tables
    print(
        f"rebuild/first = {share:.3f}; rebuild - floor = {rebuild - floor:.1f} s; "
        f"no work redone: {'yes' if nothing_done else 'NO'}"
    )
    return {
        "summary": summary(
            f"first {first:.0f} s, rebuild {rebuild:.1f} s, Dagster floor {floor:.1f} s ({len(steps)} steps)",
            share,
            f"rebuild <= {TARGET_S:.0f} s, no work",
            rebuild <= TARGET_S and nothing_done,
        ),
        "files": [path.name for path in files],
        "runs": rows,
        "built_on_rebuild": built,
    }
