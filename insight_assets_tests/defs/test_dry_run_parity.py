"""The dry run (`insight-assets estimate`) plans the model calls a build makes: on the demo built
offline (deterministic answers, so every downstream step sees what the build saw) and priced with the
config it was built with, the calls each task would make, as the dry run counts them, equal the
calls the build's ledger holds (first requests: repairs are not planned, and offline has none)."""

from __future__ import annotations

import sqlite3
from collections import Counter

import pytest

from insight_assets.app.estimating import estimate_collection
from insight_assets.core.llm.ledger import ANSWER, DEFAULT_LEDGER_FILE
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


@pytest.fixture(scope="module")
def dry_run_of_demo(demo_offline) -> Counter:
    built_with = {asset: values["config"] for asset, values in BRIEF_TRAINING.items()}
    estimates = estimate_collection(
        demo_offline.storage,
        demo_offline.llm,
        EmbedderResource(provider="hashing"),
        "demo",
        configs=built_with,
    )
    return Counter({estimate.task.split("@")[0]: estimate.items for estimate in estimates})
