"""A dry run of a collection's model calls: tokens and cost, per task, before spending anything.

The chain runs each model-calling asset's stage (``core/methods/<method>/stages.py``, the code the
asset runs) through an estimate-only client (see ``LLMClient``): each stage prices the prompts the
configured provider would read (prompts already in the cache are free) and goes on with the
offline answers, which it hands the stages after it instead of writing them, so the later stages
are priced on inputs of a realistic size. No provider is
called and no key is needed. From the UI: the job ``estimate_llm_cost`` (pick a collection); from
a shell: ``insight-assets estimate --collection NAME``.
"""

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from insight_assets.app.dry_run import DryRun, EstimateStep
from insight_assets.core.index import IndexMissing
from insight_assets.core.llm import DryRunEstimate, LLMClient, ResponseCache
from insight_assets.core.stage import CollectionScope, NothingToDo
from insight_assets.defs.catalog import domain_assets
from insight_assets.defs.domain import all_domains
from insight_assets.defs.model_calls import ModelCallConfig, scope_of
from insight_assets.defs.progress import StepsView
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


def build_order(assets: Iterable) -> list[str]:
    """Asset names, each after those it depends on; otherwise in the given order, so that one
    folder's assets stay together."""
    upstream: dict[str, list[str]] = {}
    for asset in assets:
        for spec in asset.specs:
            upstream[spec.key.to_user_string()] = [dep.asset_key.to_user_string() for dep in spec.deps]
    order: dict[str, None] = {}

    def visit(name: str) -> None:
        if name not in order:
            for dep in upstream.get(name, []):
                visit(dep)
            order[name] = None

    for name in upstream:
        visit(name)
    return list(order)


def estimate_steps() -> list[EstimateStep]:
    """Every defs folder's steps in build order, each priced on the offline answers of those before it."""
    steps = [step for domain in all_domains() for step in domain.estimate_steps]
    position = {name: index for index, name in enumerate(build_order(domain_assets()))}
    return sorted(steps, key=lambda step: position[step.asset])


def estimate_collection(
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
    collection: str,
    view: StepsView | None = None,
    configs: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[DryRunEstimate]:
    """What building ``collection``'s model-calling assets would cost with their default config
    (one judge, the configured model), or the config ``configs`` gives an asset (its values by field
    name, as a run's op config has them).

    Needs the collection's parsed documents in the warehouse. A step whose inputs come from a build
    (chunk vectors, a theme graph, indexed triples, embedded summaries) is priced once the
    collection has them and skipped before (the stage raises ``IndexMissing`` or ``NothingToDo``).
    ``view`` shows each step as it is priced.
    """
    steps = estimate_steps()
    settings = [step.config(**(configs or {}).get(step.asset, {})) for step in steps]
    overrides = {name: params for config in settings for name, params in config.task_overrides().items()}
    client = LLMClient(
        llm.settings(overrides),
        cache=ResponseCache.in_data_dir(Path(llm.data_dir)) if llm.use_cache else None,
        estimate_only=True,
    )
    scope = scope_of(storage, embedder, client, collection, planned={})
    run = DryRun(storage, embedder, scope)
    if view is not None:
        view.total = len(steps)
    for step, config in zip(steps, settings, strict=True):
        if view is not None:
            view.started(step.asset)
        if step.run is not None:
            step.run(config, run)
            outcome = "priced"
        else:
            outcome = _price(config, scope)
        if view is not None:
            view.finished(step.asset, outcome)
    return client.estimates()


def _price(config: ModelCallConfig, scope: CollectionScope) -> str:
    """Run the asset's stage on the estimate-only client; a stage whose inputs a build has not made
    yet (chunk vectors, a theme graph) prices nothing."""
    try:
        config.stage(scope)
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
