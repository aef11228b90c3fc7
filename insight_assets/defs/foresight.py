"""What a build will not build again, foreseen by its dry run.

A build reuses a step whose inputs are those of its last build, and restores one whose inputs are
those of a kept earlier build (``reuse.py``): either makes no model call and does none of its own
work. The plan a hosted build prints comes after the steps that need no model have run
(``app/build_plan.py``), so their data versions are the build's. From them, in build order, the dry
run works out each later step's inputs as the build will (``reuse.StepInputs``) and asks the build's
own decision of them: a step foreseen as reused or restored is not priced, and the data version it
will have is handed to the steps after it. A step that will be built is priced, and the steps after
it cannot be foreseen (its data version is known only once it is built): they are priced too.

Not foreseen: outputs outside the warehouse that vanished since the last build (a step's own files
are checked, as the build does, but not every store a step may keep beside them). The build then
builds a step the plan counted as reused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg
from dagster._config import process_config
from dagster._config.config_type import ConfigTypeKind
from dagster._core.definitions.assets.graph.asset_graph import AssetGraph

from insight_assets.core.storage.stores import Warehouse
from insight_assets.defs import reuse


def build_order(assets: Sequence[dg.AssetsDefinition]) -> list[str]:
    """Asset names, each after those it depends on: Dagster's own order of the asset graph (its
    ``AssetGraph``, which needs no resources, unlike ``Definitions.resolve_asset_graph``)."""
    return [key.to_user_string() for key in AssetGraph.from_assets(list(assets)).toposorted_asset_keys]


@dataclass(frozen=True)
class Foresight:
    """The build's decisions as the dry run foresees them: each later step's inputs (``inputs``;
    those it reads from a step in ``unknown`` are ``None`` there), the steps whose data version is
    known only once the build has made them (``unknown``), and why a step will not be built
    (``kept``: reused or restored, in the words of its build metadata)."""

    inputs: Mapping[str, reuse.StepInputs]
    kept: Mapping[str, str]
    unknown: frozenset[str] = frozenset()

    def not_built(self, asset: str) -> str | None:
        """Why the build will not build ``asset``, or ``None`` when it will (or cannot be told)."""
        return self.kept.get(asset)


def op_config(assets_def: dg.AssetsDefinition, values: Mapping[str, Any] | None) -> Any:
    """The config a run with ``values`` (by field name; none: the defaults) gives the asset's step,
    as its context's ``op_config`` has it: Dagster's processing of them, defaults filled in."""
    schema = assets_def.op.config_schema
    config_type = schema.config_type if schema is not None else None
    if config_type is None or (config_type.kind is ConfigTypeKind.ANY and not values):
        return None
    return process_config(config_type, dict(values or {})).value


def foresee(
    warehouse: Warehouse,
    collection: str,
    assets: Sequence[dg.AssetsDefinition],
    resources: Mapping[str, Any],
    configs: Mapping[str, Mapping[str, Any]],
    *,
    retry_failed: bool,
    vector_kinds: Mapping[str, str],
) -> Foresight:
    """Foresee the build of ``collection`` from its build notes: the steps that need no model (nor
    any step that does) as they were last built, every later step as the build will decide it.
    ``resources``: the run's resources by name (their ``identity()`` is part of a step's inputs);
    ``configs``: the run's config values by asset; ``vector_kinds``: the kind of vector table a
    step keeps beside its rows (a kept build stands for it only with that table)."""
    builds = warehouse.builds(collection)
    by_name = {key.to_user_string(): (asset, key) for asset in assets for key in asset.keys}
    versions: dict[str, str | None] = {name: note.get("data_version") for name, note in builds.items()}
    unknown: set[str] = set()
    after_model: set[str] = set()
    inputs: dict[str, reuse.StepInputs] = {}
    kept: dict[str, str] = {}
    for name in build_order(assets):
        if name not in by_name:
            continue
        assets_def, key = by_name[name]
        parents = frozenset(dep.to_user_string() for dep in assets_def.asset_deps.get(key, ()))
        if "llm" not in assets_def.required_resource_keys and not parents & after_model:
            continue  # built before the plan: its note is this build's
        after_model.add(name)
        upstream = reuse.ancestors(name, parents)
        identities = {
            resource: resources[resource].identity()
            for resource in sorted(assets_def.required_resource_keys)
            if hasattr(resources.get(resource), "identity")
        }
        step = reuse.StepInputs(
            code_version=str(assets_def.code_versions_by_key.get(key)),
            config=reuse.digest(op_config(assets_def, configs.get(name))),
            models=reuse.digest(identities),
            upstream={ancestor: versions.get(ancestor) for ancestor in upstream},
        )
        inputs[name] = step
        decision = None
        if not unknown.intersection(upstream):
            decision = _decision(
                warehouse, collection, name, builds.get(name), step, retry_failed, vector_kinds
            )
        if decision is None:
            unknown.add(name)
            versions[name] = None
        else:
            kept[name], versions[name] = decision
    return Foresight(inputs, kept, frozenset(unknown))


def _decision(
    warehouse: Warehouse,
    collection: str,
    asset: str,
    note: Mapping | None,
    inputs: reuse.StepInputs,
    retry_failed: bool,
    vector_kinds: Mapping[str, str],
) -> tuple[str, str | None] | None:
    """(why, the data version it will have) when the build will reuse or restore ``asset``; else
    ``None``."""
    decision = reuse.decide(
        note, inputs, lambda: warehouse.build_report(collection, asset), None, retry_failed=retry_failed
    )
    if decision.report is not None and note is not None:
        return decision.why, note.get("data_version")
    build = reuse.restorable(
        warehouse,
        collection,
        asset,
        inputs,
        retry_failed=retry_failed,
        vectors_kind=vector_kinds.get(asset),
        contents=False,
    )
    if build is None:
        return None
    return f"restored: its inputs are again those of its build in run {build.run_id[:8]}", build.data_version
