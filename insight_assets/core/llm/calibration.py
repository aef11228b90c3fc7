"""A plan set right by what the builds after earlier plans made.

The dry run follows the cached answer of each prompt asked before and the offline answer of every
other (``estimating.py``). Where a task's later calls depend on the answers before them, the calls
not yet asked are planned on the offline chain's shape, not the model's: ConTReGen's trees grow
with the sub-questions each plan gets and the passages each judgement keeps, and the offline
planner writes more of them than a model does (on the demo plus one paper, through the stand-in:
95 passage judgements planned, 27 made).

So a hosted build measures its plan against its bill, task by task (``PlanRatios.record``: the
calls it planned to make and those it made, repairs and retries included), for its collection and
model. The next plan of that collection and model scales each task's calls to make, and their
tokens and cost, by the last measured ratio (``calibrated``). A task planned at fewer than
``MIN_PLANNED`` calls says too little of its ratio and is left as planned; a ratio is held within
``RATIO_BOUNDS``; a build that failed measures nothing.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .dry_run import DryRunEstimate
from .ledger import DEFAULT_LEDGER_FILE
from .sqlite_store import SQLiteFile

MIN_PLANNED = 5
RATIO_BOUNDS = (0.2, 5.0)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS plan_ratios (
    collection TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    task TEXT NOT NULL,
    planned INTEGER NOT NULL,
    made INTEGER NOT NULL,
    measured_at REAL NOT NULL,
    PRIMARY KEY (collection, provider, model, task)
);
"""


@dataclass(frozen=True)
class Measured:
    """One task of one build: the calls its plan said it would make, and those it made."""

    planned: int
    made: int

    @property
    def ratio(self) -> float | None:
        """made / planned, within ``RATIO_BOUNDS``; ``None`` when too few were planned to tell."""
        if self.planned < MIN_PLANNED:
            return None
        low, high = RATIO_BOUNDS
        return min(max(self.made / self.planned, low), high)


class PlanRatios:
    """The last measured plan of each collection, model and task, beside the call ledger."""

    def __init__(self, path: Path):
        self._file = SQLiteFile(path, _SCHEMA)

    @classmethod
    def in_data_dir(cls, data_dir: Path) -> PlanRatios:
        return cls(Path(data_dir) / DEFAULT_LEDGER_FILE)

    def record(
        self, collection: str, plan: Sequence[DryRunEstimate], made: Mapping[str, int]
    ) -> dict[str, Measured]:
        """Keep what the build after ``plan`` made (``made``: calls by task key, as the ledger
        counts them) against what the plan said, for every task the plan or the build had."""
        measured = {}
        for estimate in plan:
            measured[estimate.task] = Measured(
                estimate.items - estimate.cached_items, made.get(estimate.task, 0)
            )
        models = {(estimate.provider, estimate.model) for estimate in plan}
        if len(models) != 1:  # several models (judges of their own): a ratio per model is not told apart
            return {}
        ((provider, model),) = models
        for task in set(made) - set(measured):
            measured[task] = Measured(0, made[task])
        now = time.time()
        with self._file.transaction() as connection:
            connection.executemany(
                "INSERT OR REPLACE INTO plan_ratios VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (collection, provider, model, task, found.planned, found.made, now)
                    for task, found in measured.items()
                ],
            )
        return measured

    def of(self, collection: str, provider: str, model: str) -> dict[str, Measured]:
        """The last measured plan of ``collection`` with this model, by task key."""
        with self._file.transaction() as connection:
            rows = connection.execute(
                "SELECT task, planned, made FROM plan_ratios WHERE collection = ? AND provider = ? AND model = ?",
                (collection, provider, model),
            ).fetchall()
        return {task: Measured(planned, made) for task, planned, made in rows}

    def calibrated(self, collection: str, plan: Sequence[DryRunEstimate]) -> tuple[list[DryRunEstimate], int]:
        """``plan`` with each task's calls to make (their tokens and cost too) scaled by the ratio
        its last measured plan for ``collection`` and its model showed; and how many tasks were
        scaled. A task without one stays as planned."""
        measured: dict[tuple[str, str], dict[str, Measured]] = {}
        found, scaled = [], 0
        for estimate in plan:
            model = (estimate.provider, estimate.model)
            if model not in measured:
                measured[model] = self.of(collection, *model)
            last = measured[model].get(estimate.task)
            ratio = last.ratio if last is not None else None
            if ratio is None or estimate.items == estimate.cached_items:
                found.append(estimate)
            else:
                found.append(_scaled(estimate, ratio))
                scaled += 1
        return found, scaled


def _scaled(estimate: DryRunEstimate, ratio: float) -> DryRunEstimate:
    """The estimate with its calls to make scaled by ``ratio`` (the cached ones as they are)."""
    to_make = estimate.items - estimate.cached_items
    scaled = round(to_make * ratio)
    share = scaled / to_make if to_make else 1.0

    def scale(value):
        return None if value is None else value * share

    return dataclasses.replace(
        estimate,
        items=estimate.cached_items + scaled,
        input_tokens=round(estimate.input_tokens * share),
        output_tokens=round(estimate.output_tokens * share),
        max_output_tokens=round(estimate.max_output_tokens * share),
        cost_usd=scale(estimate.cost_usd),
        max_cost_usd=scale(estimate.max_cost_usd),
        expected_seconds=scale(estimate.expected_seconds),
    )
