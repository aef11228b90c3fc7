"""A plan set right by the last build's bill (``core/llm/calibration.py``): each task's calls to
make scaled by the ratio of calls made to calls planned that the last measured build of the same
collection with the same model showed."""

from __future__ import annotations

import time

from insight_assets.core.llm.calibration import MIN_PLANNED, PlanRatios
from insight_assets.core.llm.dry_run import DryRunEstimate
from insight_assets.core.llm.ledger import ANSWER, OK, REPAIR, CallLedger, LedgerRow


def estimate(task: str, items: int, cached: int, model: str = "stand-in", cost: float | None = 1.0):
    return DryRunEstimate(
        task=task,
        provider="openai-compatible",
        model=model,
        items=items,
        cached_items=cached,
        input_tokens=10 * (items - cached),
        output_tokens=5 * (items - cached),
        max_output_tokens=50 * (items - cached),
        cost_usd=cost,
        max_cost_usd=None if cost is None else 10 * cost,
    )


def call(task: str, *, partition: str = "ten", cache_hit: bool = False, purpose: str = ANSWER, at: float):
    return LedgerRow(
        run_id="run",
        asset="asset",
        partition=partition,
        task=task,
        task_version="1",
        provider="openai-compatible",
        model="stand-in",
        purpose=purpose,
        status=OK,
        cache_hit=cache_hit,
        input_tokens=10,
        output_tokens=5,
        tokens_estimated=False,
        latency_s=0.1,
        cost_usd=None,
        attempts=1,
        error=None,
        created_at=at,
    )


def test_the_calls_a_build_made_are_counted_by_task_since_its_plan_repairs_in_and_cache_hits_out(tmp_path):
    ledger = CallLedger.in_data_dir(tmp_path)
    planned_at = time.time()
    ledger.record(call("judge", at=planned_at - 60))  # an earlier build's
    ledger.record(call("judge", at=planned_at + 1))
    ledger.record(call("judge", purpose=REPAIR, at=planned_at + 2))
    ledger.record(call("judge", cache_hit=True, at=planned_at + 3))
    ledger.record(call("judge", partition="other", at=planned_at + 4))
    ledger.record(call("plan", at=planned_at + 5))

    assert ledger.calls_made("ten", planned_at) == {"judge@v1": 2, "plan@v1": 1}


def test_a_task_the_last_build_made_fewer_calls_for_than_planned_is_planned_at_that_ratio(tmp_path):
    ratios = PlanRatios.in_data_dir(tmp_path)
    ratios.record(
        "ten",
        [
            estimate("judge@v1", 120, 20),
            estimate("plan@v1", MIN_PLANNED - 1, 0),
            estimate("answer@v1", 40, 0),
        ],
        {"judge@v1": 30, "plan@v1": 12, "answer@v1": 400},
    )

    plan = [estimate("judge@v1", 110, 10), estimate("plan@v1", 8, 0), estimate("answer@v1", 10, 0)]
    shown, scaled = ratios.calibrated("ten", plan)

    judge, planned, answer = shown
    # 100 to make at 30 made per 100 planned: 30, with the 10 cached as they were; tokens and cost too.
    assert (judge.items, judge.cached_items, judge.input_tokens, judge.cost_usd) == (40, 10, 300, 0.3)
    # Planned at fewer than MIN_PLANNED calls, the last build says too little of its ratio.
    assert planned == plan[1]
    # A ratio is held within its bounds: ten times the calls is planned at five.
    assert answer.items == 50
    assert scaled == 2


def test_a_ratio_is_kept_per_collection_and_model(tmp_path):
    ratios = PlanRatios.in_data_dir(tmp_path)
    ratios.record("ten", [estimate("judge@v1", 100, 0)], {"judge@v1": 25})

    other_collection = ratios.calibrated("demo", [estimate("judge@v1", 100, 0)])
    other_model = ratios.calibrated("ten", [estimate("judge@v1", 100, 0, model="gpt-4o-mini")])
    all_cached = ratios.calibrated("ten", [estimate("judge@v1", 100, 100)])

    assert other_collection == ([estimate("judge@v1", 100, 0)], 0)
    assert other_model == ([estimate("judge@v1", 100, 0, model="gpt-4o-mini")], 0)
    assert all_cached == ([estimate("judge@v1", 100, 100)], 0)
    # The next build's bill replaces the last.
    ratios.record("ten", [estimate("judge@v1", 100, 0)], {"judge@v1": 50})
    assert ratios.calibrated("ten", [estimate("judge@v1", 10, 0)])[0][0].items == 5
