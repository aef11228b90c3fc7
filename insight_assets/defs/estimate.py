"""The dry run as a Dagster job, and its table: ``estimate_llm_cost`` prices a collection's model
calls (pick a collection in the UI) with the configured `llm` resource and calls nothing; the
engine is ``dry_run.estimate_collection``, which ``insight-assets estimate`` runs too.
"""

from collections.abc import Sequence
from typing import Any

import dagster as dg

from insight_assets.core.llm import DryRunEstimate
from insight_assets.core.page.markdown import markdown_table
from insight_assets.defs.dry_run import estimate_collection
from insight_assets.defs.partitions import collection_partitions
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource

ESTIMATE_COLUMNS = [
    "task",
    "provider",
    "model",
    "items",
    "cached_items",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "max_cost_usd",
]
# Shown when the model runs here (provider local): the expected wall time, in seconds.
TIME_COLUMN = "expected_s"


def estimate_columns(estimates: Sequence[DryRunEstimate]) -> list[str]:
    """The table's columns: the expected time too when some estimate has one."""
    timed = any(estimate.expected_seconds is not None for estimate in estimates)
    return ESTIMATE_COLUMNS + ([TIME_COLUMN] if timed else [])


def estimate_rows(estimates: Sequence[DryRunEstimate]) -> list[dict[str, Any]]:
    """One row per task plus a total, costs as strings ("n/a" where the model has no price)."""
    rows: list[dict[str, Any]] = []
    for estimate in estimates:
        rows.append(
            {
                "task": estimate.task,
                "provider": estimate.provider,
                "model": estimate.model,
                "items": estimate.items,
                "cached_items": estimate.cached_items,
                "input_tokens": estimate.input_tokens,
                "output_tokens": estimate.output_tokens,
                "cost_usd": _usd(estimate.cost_usd),
                "max_cost_usd": _usd(estimate.max_cost_usd),
                TIME_COLUMN: _seconds(estimate.expected_seconds),
            }
        )
    priced = all(estimate.cost_usd is not None for estimate in estimates)
    rows.append(
        {
            "task": "total",
            "items": sum(estimate.items for estimate in estimates),
            "cached_items": sum(estimate.cached_items for estimate in estimates),
            "input_tokens": sum(estimate.input_tokens for estimate in estimates),
            "output_tokens": sum(estimate.output_tokens for estimate in estimates),
            "cost_usd": _usd(sum(e.cost_usd or 0.0 for e in estimates)) if priced else "n/a",
            "max_cost_usd": _usd(sum(e.max_cost_usd or 0.0 for e in estimates)) if priced else "n/a",
            TIME_COLUMN: _seconds(total_seconds(estimates)),
        }
    )
    return rows


def total_seconds(estimates: Sequence[DryRunEstimate]) -> float | None:
    """The expected wall time of all the calls (``None`` unless every estimate has one)."""
    times = [estimate.expected_seconds for estimate in estimates]
    return sum(times) if times and None not in times else None


def _usd(amount: float | None) -> str:
    return "n/a" if amount is None else f"{amount:.4f}"


def _seconds(amount: float | None) -> str:
    return "n/a" if amount is None else f"{amount:.0f}"


@dg.op(out=dg.Out(dg.Nothing))
def estimate_model_calls(
    context: dg.OpExecutionContext, storage: StorageResource, llm: LLMResource, embedder: EmbedderResource
) -> dg.Output:
    """Price the collection's model calls with the configured `llm` resource; call nothing."""
    estimates = estimate_collection(storage, llm, embedder, context.partition_key)
    rows = estimate_rows(estimates)
    total = rows[-1]
    context.log.info(
        f"{context.partition_key}: {total['items']} model calls, {total['input_tokens']} input and about "
        f"{total['output_tokens']} output tokens, estimated cost {total['cost_usd']} USD"
    )
    notes = sorted({estimate.note for estimate in estimates if estimate.note})
    return dg.Output(
        None,
        metadata={
            "estimate": dg.MetadataValue.md(markdown_table(rows, estimate_columns(estimates))),
            "calls": total["items"],
            "input_tokens": total["input_tokens"],
            "output_tokens": total["output_tokens"],
            "cost_usd": total["cost_usd"],
            "expected_s": total[TIME_COLUMN],
            "notes": "; ".join(notes) or "none",
        },
    )


@dg.job(
    partitions_def=collection_partitions,
    description="Dry run: tokens and cost of a collection's model calls.",
)
def estimate_llm_cost() -> None:
    estimate_model_calls()
