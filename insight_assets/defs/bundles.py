"""Named bundles of settings (``insight_assets/bundles/NAME.json``: a smoke run's, a brief
training's), loaded by one function and checked against the assets they set."""

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import ValidationError

from insight_assets.core.stage_settings import settings_problems
from insight_assets.defs.stage_assets import declared_stages

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
