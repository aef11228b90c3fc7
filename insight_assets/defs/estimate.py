"""The dry run as a Dagster job: ``estimate_llm_cost`` prices a collection's model calls (pick a
collection in the UI) with the configured `llm` resource and calls nothing; the engine is
``app/estimating.py``, which ``insight-assets estimate`` runs too."""

import dagster as dg

from insight_assets.core.markdown import markdown_table
from insight_assets.defs.estimating import TIME_COLUMN, estimate_collection, estimate_columns, estimate_rows
from insight_assets.defs.partitions import collection_partitions
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource


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
