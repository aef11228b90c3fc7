"""The factory: the Dagster asset of each declared stage (``core/runtime/stage.py``), and the named
bundles of settings checked against them.

The asset's config is generated from the stage's settings model (the same fields, defaults, bounds
and descriptions); a run's config is validated by that model, so a value it refuses fails the step
naming the asset. Its partitions, pool and checks are the stage's; running it is
``materialization.materialize_stage``.
"""

import json
import typing
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import dagster as dg
import pydantic
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from insight_assets.core.runtime.stage import Stage, StageSettings
from insight_assets.core.runtime.stage_settings import settings_problems
from insight_assets.defs.materialization import declare, declared_stages, materialize_stage
from insight_assets.defs.partitions import asset_settings, collection_check
from insight_assets.defs.pools import LLM_POOL, pooled

S = TypeVar("S", bound=BaseModel)


class _GeneratedConfig(dg.Config):
    # Built when a run's config is first checked against it, not when the definitions load.
    model_config = pydantic.ConfigDict(defer_build=True)


def dagster_config(settings: type[BaseModel]) -> type[dg.Config]:
    """A Dagster config class with ``settings``' fields (nested settings models become nested
    config classes): what the UI's launchpad shows and a run's config is checked against."""
    fields: dict[str, Any] = {}
    for name, info in settings.model_fields.items():
        annotation = _config_type(info.annotation)
        fields[name] = (annotation, FieldInfo.merge_field_infos(info, annotation=annotation))
    return pydantic.create_model(
        f"{settings.__name__}Config", __base__=_GeneratedConfig, __doc__=settings.__doc__, **fields
    )


def _config_type(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return dagster_config(annotation)
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        return list[_config_type(item)]
    return annotation


def stage_settings(stage: Stage, config: dg.Config) -> StageSettings:
    """The stage's settings from a run's config of its asset (see ``settings_of``)."""
    return settings_of(stage.settings, config, stage.name)


def settings_of(settings: type[S], config: dg.Config, asset: str) -> S:
    """``settings`` from a run's config of ``asset`` (a config made by ``dagster_config``, or one
    that adds fields of the asset's own to it); settings it refuses fail the step with the reasons,
    naming the asset."""
    values = {name: value for name, value in config.model_dump().items() if name in settings.model_fields}
    try:
        return settings.model_validate(values)
    except ValidationError as error:
        raise dg.Failure(description=f"Invalid {asset} config: {settings_problems(error)}") from error


class DeclarationError(RuntimeError):
    """Two stages of one name, or a stage whose declaration does not hold together."""


def stage_assets(stages: Sequence[Stage]) -> list[dg.AssetsDefinition]:
    """The asset of each of ``stages``."""
    return [stage_asset(stage) for stage in stages]


def stage_asset(stage: Stage) -> dg.AssetsDefinition:
    """The Dagster asset that runs ``stage`` for each collection of a run and keeps its output."""
    known = declare(stage)
    if known is not stage:
        raise DeclarationError(f"two stages are named {stage.name!r}: {known.method} and {stage.method}")
    config_class = dagster_config(stage.settings)
    checks = [collection_check(check.name, stage.name, check.description or None) for check in stage.checks]

    @dg.asset(
        name=stage.name,
        description=stage.description,
        kinds=set(stage.kinds),
        code_version=stage.code_version,
        required_resource_keys={"storage", "llm", *(["embedder"] if stage.embedder else [])},
        check_specs=checks,
        **pooled(LLM_POOL),
        **asset_settings(stage.method, deps=stage.reads),
    )
    def build(context: dg.AssetExecutionContext, config: config_class) -> dg.MaterializeResult:  # type: ignore[valid-type]
        return materialize_stage(context, stage, stage_settings(stage, config))

    return build


# Named bundles of settings (``insight_assets/bundles/NAME.json``: a smoke run's, a brief training's),
# loaded by one function and checked against the assets they set.
BUNDLES = Path(__file__).resolve().parent.parent / "bundles"


class BundleError(ValueError):
    """A bundle that names an asset that does not exist, or a setting its asset does not have."""


def load_bundle(
    *names: str, assets: Iterable[dg.AssetsDefinition] | None = None
) -> dict[str, dict[str, Any]]:
    """The settings of the bundles ``names`` by asset (``{asset: {field: value}}``), each checked: a
    stage's by its settings model, another asset's against its config's fields (``assets``: the
    definitions' assets, by default the catalog's). Several bundles are laid over one another in
    order: a later one's value of a setting wins (``load_bundle("smoke", "every_baseline")``)."""
    if assets is None:
        from insight_assets.defs.catalog import ALL_ASSETS  # the catalog loads the stages

        assets = ALL_ASSETS
    by_name = {key.to_user_string(): asset for asset in assets for key in asset.keys}
    merged: dict[str, dict[str, Any]] = {}
    for name in names:
        path = BUNDLES / f"{name}.json"
        if not path.is_file():
            known = sorted(file.stem for file in BUNDLES.glob("*.json"))
            raise BundleError(f"no bundle {name!r}; the bundles are {', '.join(known)}")
        bundle = json.loads(path.read_text(encoding="utf-8"))
        for asset, values in bundle.items():
            merged[asset] = {**merged.get(asset, {}), **values}
        _check(name, merged, by_name)
    return merged


def op_config(bundle: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """A bundle as a run's ``ops`` config."""
    return {asset: {"config": dict(values)} for asset, values in bundle.items()}


def _check(name: str, bundle: Mapping[str, Any], assets: Mapping[str, dg.AssetsDefinition]) -> None:
    stages = {stage.name: stage for stage in declared_stages()}
    for asset, values in bundle.items():
        if asset not in assets:
            raise BundleError(f"bundle {name!r} sets {asset!r}, which is not an asset")
        if asset in stages:
            try:
                stages[asset].settings(**values)
            except ValidationError as error:
                raise BundleError(f"bundle {name!r}, {asset}: {settings_problems(error)}") from error
            continue
        fields = assets[asset].op.config_schema.config_type.fields
        unknown = sorted(set(values) - set(fields))
        if unknown:
            raise BundleError(f"bundle {name!r}, {asset}: no setting {', '.join(map(repr, unknown))}")
