"""What a build with a hosted model will ask and spend, shown before its first call.

A model a researcher pays for is asked only after the build has said what it plans. The assets
that need no model run first, in a run of their own (parsing, chunks, embeddings, the theme graph:
what the later steps' prompts are made from); the dry run (``dry_run.estimate_collection``
in ``defs/``) then prices every model-calling step on them, following the cached answers where a
prompt was asked before, and the plan is printed with the run's budget; then the build's run asks
the model. A collection whose
build signature is its last successful build's has nothing to plan: nothing changed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from insight_assets.app import progress
from insight_assets.app.build_runs import run_job


def model_free_keys() -> list:
    """The assets that need no model, nor any asset that does: what a plan is priced on."""
    import dagster as dg

    from insight_assets.definitions import defs
    from insight_assets.defs.catalog import ALL_ASSETS

    calling = [asset for asset in ALL_ASSETS if "llm" in asset.required_resource_keys]
    later = dg.AssetSelection.assets(*calling).downstream().resolve(defs.resolve_asset_graph())
    return sorted({key for asset in ALL_ASSETS for key in asset.keys} - later, key=lambda key: key.path)


@dataclass(frozen=True)
class Planned:
    """Whether the build may go on, and the assets its run is left to build (None: all of them)."""

    go_on: bool
    rest: list | None = None


def plan_first(
    dagster_instance,
    job,
    collection: str,
    tags: dict[str, str],
    *,
    resources: dict,
    report: Callable[[object], None],
    verbose: bool,
) -> Planned:
    """Build what needs no model, ``report`` its run's result, then print the plan. The build goes
    on with the other assets; not at all when that first run failed or the plan could not be made.
    ``resources``: the ``llm``, ``storage`` and ``embedder`` resources the plan is made with."""
    from insight_assets.defs.sources import BUILD_SIGNATURE_TAG, last_built_signature

    if last_built_signature(dagster_instance, collection) == tags.get(BUILD_SIGNATURE_TAG):
        print("  Nothing changed since the last build: no model call is planned.", flush=True)
        return Planned(go_on=True)
    keys = model_free_keys()
    # Not tagged with the build's signature: only the whole build, once it succeeds, stands for it.
    first_tags = {name: value for name, value in tags.items() if name != BUILD_SIGNATURE_TAG}
    with progress.build_view(
        dagster_instance, f"{collection}: what needs no model", len(keys), verbose
    ) as view:
        prepared = run_job(
            job, dagster_instance, collection, keys, tags=first_tags | view.tags, verbose=verbose
        )
    report(prepared)
    if not prepared.success:
        return Planned(go_on=False)
    from insight_assets.core.llm import LLMError
    from insight_assets.core.storage.duckdb_file import StoreError

    try:
        lines = plan_lines(collection, **resources)
    except (LLMError, StoreError) as error:  # a model's settings, a store: said, not a traceback
        print(
            f"  The plan could not be made ({type(error).__name__}: {error}); nothing was asked of the "
            "model. Build with --no-plan to ask it without a plan.",
            file=sys.stderr,
        )
        return Planned(go_on=False)
    for line in lines:
        print(f"  {line}", flush=True)
    every = {node.key for node in job.asset_layer.asset_graph.asset_nodes if node.is_materializable}
    return Planned(go_on=True, rest=sorted(every - set(keys), key=lambda key: key.path))


def plan_lines(collection: str, *, llm, storage, embedder) -> list[str]:
    """The plan in words: calls to make and answers the cache has, the expected and the highest
    cost, the steps the build reuses or restores (no call), those it could not price, the run's
    budget."""
    from insight_assets.defs.dry_run import estimate_collection

    outcomes = StepOutcomes()
    estimates = estimate_collection(storage, llm, embedder, collection, outcomes)
    return describe_plan(
        estimates, llm.run_budget_usd(), llm.budget_tokens, outcomes.skipped, kept=len(outcomes.kept)
    )


class StepOutcomes:
    """The dry run's view (``estimate_collection``'s ``view``): which steps it could not price, and
    which the build will reuse or restore (priced at no call)."""

    total = 0

    def __init__(self) -> None:
        self.skipped: list[str] = []
        self.kept: list[str] = []

    def started(self, asset: str) -> None:
        pass

    def finished(self, asset: str, outcome: str) -> None:
        if outcome.startswith("skipped"):
            self.skipped.append(asset)
        elif outcome.startswith(("reused", "restored")):
            self.kept.append(asset)


def describe_plan(
    estimates: Sequence,
    budget_usd: float | None,
    budget_tokens: int | None,
    skipped: Sequence[str] = (),
    *,
    kept: int = 0,
) -> list[str]:
    items = sum(estimate.items for estimate in estimates)
    cached = sum(estimate.cached_items for estimate in estimates)
    tokens = sum(estimate.input_tokens + estimate.output_tokens for estimate in estimates)
    priced = all(estimate.cost_usd is not None for estimate in estimates)
    if priced:
        cost = sum(estimate.cost_usd for estimate in estimates)
        highest = sum(estimate.max_cost_usd for estimate in estimates)
        price = f"about ${cost:.2f} (at most ${highest:.2f} if every answer used its max_tokens)"
    else:
        price = f"about {tokens:,} tokens (the model has no price: its cost is unknown)"
    lines = [f"Plan: {items - cached:,} model calls to make, {cached:,} answered from the cache; {price}."]
    if kept:
        lines.append(
            f"{kept} model-calling step(s) will reuse their last build or get an earlier one back: no call."
        )
    if skipped:
        lines.append(
            f"Not in the plan: {', '.join(skipped)}, priced only once what they read (made by the "
            "model's earlier steps) is built."
        )
    limits = []
    if budget_usd is not None:
        limits.append(f"${budget_usd:.2f}")
    if budget_tokens is not None:
        limits.append(f"{budget_tokens:,} tokens")
    if limits:
        lines.append(f"Budget: {' and '.join(limits)} for the run; a call that could pass it is not sent.")
    else:
        lines.append(
            "Budget: none set (build --budget-usd, or budget_usd / budget_tokens on the llm resource)."
        )
    return lines
