"""A dry run of a collection's model calls: tokens and cost, per task, before spending anything.

The chain runs each declared stage (``core/runtime/stage.py``, the code its asset runs) through an
estimate-only client (see ``LLMClient``): each stage prices the prompts the configured provider
would read and goes on with the answers the build would get where they are known (a cached answer
is free and is what the build will read; a request recorded as failed fails here too), else with
the offline answers; it hands them to the stages after it instead of writing them, so the later
stages are priced on inputs of a realistic size. No provider is called and no key is needed. From
the UI: the job ``estimate_llm_cost`` (pick a collection); from a shell: ``insight-assets estimate
--collection NAME``; and ``insight-assets build`` with a hosted model before its first call
(``app/build_plan.py``). The job runs the engine below.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
from dagster._core.definitions.assets.graph.asset_graph import AssetGraph

from insight_assets.core.llm import DryRunEstimate, LLMClient, ResponseCache
from insight_assets.core.page.markdown import markdown_table
from insight_assets.core.retrieval.index import IndexMissing
from insight_assets.core.runtime.stage import CollectionScope, Judge, NothingToDo, Stage
from insight_assets.defs.catalog import domain_assets
from insight_assets.defs.domain import all_domains
from insight_assets.defs.materialization import scope_of
from insight_assets.defs.partitions import collection_partitions
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource
from insight_assets.defs.stage_assets import declared_stages

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


def build_order(assets: list[dg.AssetsDefinition]) -> list[str]:
    """Asset names, each after those it depends on: Dagster's own order of the asset graph (its
    ``AssetGraph``, which needs no resources, unlike ``Definitions.resolve_asset_graph``)."""
    return [key.to_user_string() for key in AssetGraph.from_assets(assets).toposorted_asset_keys]


@dataclass
class DryRun:
    """What a dry run's steps share: the resources, and the collection's scope with the
    estimate-only client and what the stages before planned (see ``core/runtime/stage.py``)."""

    storage: StorageResource
    embedder: EmbedderResource
    scope: CollectionScope

    @property
    def client(self) -> LLMClient:
        return self.scope.client

    @property
    def collection(self) -> str:
        return self.scope.collection


@dataclass(frozen=True)
class Step:
    """One priced step: a declared stage, or a defs folder's own (``Domain.price``: the page's)."""

    asset: str
    stage: Stage | None = None
    price: Callable[[Mapping[str, Any], DryRun], None] | None = None


def estimate_steps() -> list[Step]:
    """Every declared stage and every folder's own priced step, in build order: each is priced on
    the answers (cached, else offline) of those before it."""
    steps = [Step(stage.name, stage=stage) for stage in declared_stages()]
    steps += [Step(name, price=price) for domain in all_domains() for name, price in domain.price.items()]
    position = {name: index for index, name in enumerate(build_order(domain_assets()))}
    return sorted(steps, key=lambda step: position[step.asset])


def estimate_collection(
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
    collection: str,
    view: Any | None = None,
    configs: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[DryRunEstimate]:
    """What building ``collection``'s model-calling assets would cost with their default settings
    (one judge, the configured model), or the settings ``configs`` gives an asset (its values by
    field name, as a run's op config has them).

    Needs the collection's parsed documents in the warehouse. A step whose inputs come from a build
    (chunk vectors, a theme graph, indexed triples, embedded summaries) is priced once the
    collection has them and skipped before (the stage raises ``IndexMissing`` or ``NothingToDo``).
    ``view`` (a ``StepsView``) shows each step as it is priced.
    """
    configs = configs or {}
    steps = estimate_steps()
    settings = {step.asset: step.stage.settings_from(configs.get(step.asset)) for step in steps if step.stage}
    overrides = {
        name: params
        for step in steps
        if step.stage
        for name, params in settings[step.asset].task_overrides(step.stage.tasks).items()
    }
    client = LLMClient(
        llm.settings(overrides),
        cache=ResponseCache.in_data_dir(Path(llm.data_dir)) if llm.use_cache else None,
        estimate_only=True,
    )
    scope = scope_of(storage, embedder, client, collection).dry_run()
    run = DryRun(storage, embedder, scope)
    if view is not None:
        view.total = len(steps)
    for step in steps:
        if view is not None:
            view.started(step.asset)
        if step.stage is not None:
            outcome = _price(step.stage, settings[step.asset], scope)
        else:
            step.price(configs.get(step.asset, {}), run)
            outcome = "priced"
        if view is not None:
            view.finished(step.asset, outcome)
    return client.estimates()


def _price(stage: Stage, settings, scope: CollectionScope) -> str:
    """Run the stage on the estimate-only client (each judge of a panel on it too); a stage whose
    inputs a build has not made yet (chunk vectors, a theme graph) prices nothing."""
    scope.panel = tuple(Judge(judge.name, scope.client) for judge in stage.panel(settings))
    try:
        scope.run(stage, settings)
    except (NothingToDo, IndexMissing) as missing:
        return f"skipped: {missing}"
    return "priced"


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
