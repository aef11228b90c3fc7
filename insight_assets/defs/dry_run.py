"""The dry run: what building a collection's model-calling steps would cost, calling no model.

``estimate_collection`` (``insight-assets estimate``, the job ``estimate_llm_cost``, and
``insight-assets build`` with a hosted model before its first call) runs each declared stage,
in the asset graph's order, through an estimate-only client (see ``LLMClient``): each stage prices
the prompts the configured provider would read and goes on with the answers the build would get
where they are known (a cached answer is free and is what the build will read; a request recorded
as failed fails here too), else with the offline answers; what it hands on goes to the stages
after it instead of being written, so the later stages are priced on inputs of a realistic size.
No provider is called and no key is needed.

Before it prices a step it foresees the build's own decision (``foresight.py``): a step the build
will reuse or restore makes no call and is not priced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from insight_assets.core.llm import DryRunEstimate, LLMClient, ResponseCache
from insight_assets.core.retrieval.index import IndexMissing
from insight_assets.core.runtime.stage import CollectionScope, Judge, NothingToDo, Stage
from insight_assets.defs.domain import all_domains
from insight_assets.defs.foresight import Foresight, build_order, foresee
from insight_assets.defs.materialization import declared_stages, scope_of

if TYPE_CHECKING:
    from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource


@dataclass
class DryRun:
    """What a dry run's steps share: the resources, and the collection's scope with the
    estimate-only client and what the stages before planned (see ``core/runtime/stage.py``)."""

    storage: StorageResource
    embedder: EmbedderResource
    scope: CollectionScope
    foresight: Foresight = field(default_factory=lambda: Foresight({}, {}))

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
    from insight_assets.defs.catalog import (
        domain_assets,  # the catalog loads every asset, this one's users too
    )

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
    *,
    every_step: bool = False,
) -> list[DryRunEstimate]:
    """What building ``collection``'s model-calling assets would cost with their default settings
    (one judge, the configured model), or the settings ``configs`` gives an asset (its values by
    field name, as a run's op config has them).

    Needs the collection's parsed documents in the warehouse. A step whose inputs come from a build
    (chunk vectors, a theme graph, indexed triples, embedded summaries) is priced once the
    collection has them and skipped before (the stage raises ``IndexMissing`` or ``NothingToDo``).
    ``view`` (a ``StepsView``) shows each step as it is priced. A step the build would reuse or
    restore (``foresight.py``) makes no call and is not priced, unless ``every_step``: what building
    every step again would cost.
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
    foresight = Foresight({}, {}) if every_step else _foresight(storage, llm, embedder, collection, configs)
    run = DryRun(storage, embedder, scope, foresight)
    if view is not None:
        view.total = len(steps)
    for step in steps:
        if view is not None:
            view.started(step.asset)
        kept = run.foresight.not_built(step.asset)
        if kept is not None:
            outcome = kept  # no call: the build reuses or restores it
        elif step.stage is not None:
            outcome = _price(step.stage, settings[step.asset], scope)
        else:
            step.price(configs.get(step.asset, {}), run)
            outcome = "priced"
        if view is not None:
            view.finished(step.asset, outcome)
    return client.estimates()


def _foresight(
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
    collection: str,
    configs: Mapping[str, Mapping[str, Any]],
) -> Foresight:
    """The steps the build will reuse or restore, foreseen from the collection's build notes."""
    from insight_assets.defs.catalog import ALL_ASSETS  # the catalog loads every asset

    return foresee(
        storage.warehouse,
        collection,
        ALL_ASSETS,
        {"storage": storage, "llm": llm, "embedder": embedder},
        configs,
        retry_failed=llm.retries_failed(),
        vector_kinds={
            stage.name: stage.vectors(storage.vectors_uri).kind
            for stage in declared_stages()
            if stage.vectors
        },
    )


def _price(stage: Stage, settings, scope: CollectionScope) -> str:
    """Run the stage on the estimate-only client (each judge of a panel on it too); a stage whose
    inputs a build has not made yet (chunk vectors, a theme graph) prices nothing."""
    scope.panel = tuple(Judge(judge.name, scope.client) for judge in stage.panel(settings))
    try:
        scope.run(stage, settings)
    except (NothingToDo, IndexMissing) as missing:
        return f"skipped: {missing}"
    return "priced"
