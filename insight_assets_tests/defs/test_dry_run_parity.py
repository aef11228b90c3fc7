"""The dry run (`insight-assets estimate`) plans the model calls a build makes: on the demo built
offline (deterministic answers, so every downstream step sees what the build saw) and priced with the
config it was built with, the calls each task would make, as the dry run counts them, equal the
calls the build's ledger holds (first requests: repairs are not planned, and offline has none); and
it writes nothing."""

from __future__ import annotations

import sqlite3
from collections import Counter

import pytest

from insight_assets.core.llm.ledger import ANSWER, DEFAULT_LEDGER_FILE
from insight_assets.core.storage.stores import warehouse_tables
from insight_assets.defs.dry_run import estimate_collection
from insight_assets.defs.resources import EmbedderResource
from insight_assets_tests.defs.helpers import BRIEF_TRAINING

METHOD_OF_TASK_PREFIX = (
    ("xsum_", "xsum"),
    ("geval_", "xsum"),
    ("checkeval_", "xsum"),
    ("contregen_", "contregen"),
    ("insight_rag_", "insight-rag"),
    ("scipip_", "scipip"),
)


def _method(task: str) -> str:
    """The method a task belongs to (for the failure message): its prefix, else InsightGen's chain."""
    return next((method for prefix, method in METHOD_OF_TASK_PREFIX if task.startswith(prefix)), "insightgen")


def _calls_made(build) -> Counter:
    """The build's model calls per task (first requests only: no repair, no longer retry)."""
    with sqlite3.connect(build.root / "data" / DEFAULT_LEDGER_FILE) as ledger:
        rows = ledger.execute(
            "SELECT task, count(*) FROM calls WHERE partition = 'demo' AND run_id IS NOT NULL AND purpose = ? "
            "GROUP BY task",
            [ANSWER],
        ).fetchall()
    return Counter(dict(rows))


@pytest.mark.parametrize("method", ["insightgen", "xsum", "contregen", "insight-rag", "scipip"])
def test_the_dry_run_plans_the_calls_the_build_made(demo_offline, method, dry_run_of_demo):
    made = {task: n for task, n in _calls_made(demo_offline).items() if _method(task) == method}
    planned = {task: n for task, n in dry_run_of_demo.items() if _method(task) == method}
    assert made, f"the build made no {method} call"
    assert planned == made


def test_the_dry_run_writes_nothing(demo_offline, dry_run_of_demo):
    assert rows_per_table(demo_offline.storage) == dry_run_of_demo.rows_before


class DryRunOfDemo(Counter):
    """The calls the dry run planned per task, and the warehouse's rows per table before it ran."""

    rows_before: dict[str, tuple]


def rows_per_table(storage) -> dict[str, tuple]:
    """Each table's row count and a hash of its rows' contents."""
    with storage.warehouse.session() as db:
        return {
            table: tuple(db.rows(f"SELECT count(*) AS n, sum(hash(t)) AS h FROM {table} t")[0].values())
            for table in warehouse_tables()
        }


@pytest.fixture(scope="module")
def dry_run_of_demo(demo_offline) -> DryRunOfDemo:
    built_with = {asset: values["config"] for asset, values in BRIEF_TRAINING.items()}
    before = rows_per_table(demo_offline.storage)
    estimates = estimate_collection(
        demo_offline.storage,
        demo_offline.llm,
        EmbedderResource(provider="hashing"),
        "demo",
        configs=built_with,
        every_step=True,  # the demo is built: else every step is foreseen as reused
    )
    planned = DryRunOfDemo({estimate.task.split("@")[0]: estimate.items for estimate in estimates})
    planned.rows_before = before
    return planned
