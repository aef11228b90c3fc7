"""The Dagster asset of a declared stage (``core/stage.py``): config schema, partitions, pool,
checks, metadata and writing, made once here for every stage.

The asset's config is generated from the stage's settings model (the same fields, defaults, bounds
and descriptions); a run's config is validated by that model, so a value it refuses fails the step
naming the asset. Each collection of the run gets a scope with a client whose ledger rows name the
asset (a judging stage: one client per judge); the stage runs; its ``StageOutput`` tables replace
the collection's rows; its report becomes the materialization's metadata (with the model calls'
tokens and cost) and its check results, each recorded for its collection's partition.
"""

import typing
from collections.abc import Sequence
from typing import Any, TypeVar

import dagster as dg
import pydantic
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from insight_assets.core.index import IndexMissing
from insight_assets.core.llm import LLMClient, RunSummary
from insight_assets.core.stage import Judge, NothingToDo, Stage, StageSettings
from insight_assets.core.stage_output import StageOutput
from insight_assets.core.stage_settings import settings_problems
from insight_assets.defs.metadata import (
    CollectionReport,
    check_result,
    materialize_each,
    metadata_value,
    nothing_to_do,
)
from insight_assets.defs.model_calls import llm_metadata, model_client, model_errors_as_failures, scope_of
from insight_assets.defs.partitions import asset_settings, collection_check
from insight_assets.defs.pools import LLM_POOL, pooled
from insight_assets.defs.resources import ModelChoice

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


# Every stage an asset was made of, by name: what the dry run prices once the catalog has loaded.
_DECLARED: dict[str, Stage] = {}


class DeclarationError(RuntimeError):
    """Two stages of one name, or a stage whose declaration does not hold together."""


def stage_assets(stages: Sequence[Stage]) -> list[dg.AssetsDefinition]:
    """The asset of each of ``stages``."""
    return [stage_asset(stage) for stage in stages]


def declared_stages() -> list[Stage]:
    """The stages assets were made of so far (all of them once ``defs.catalog`` has loaded)."""
    return list(_DECLARED.values())


def stage_asset(stage: Stage) -> dg.AssetsDefinition:
    """The Dagster asset that runs ``stage`` for each collection of a run and keeps its output."""
    known = _DECLARED.setdefault(stage.name, stage)
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
        settings = stage_settings(stage, config)
        storage = context.resources.storage
        present = stage.outputs_present
        return materialize_each(
            context,
            storage,
            lambda collection: _build_collection(context, stage, settings, collection),
            outputs_present=(lambda c: present(storage.vectors_uri, c)) if present else None,
        )

    return build


def _build_collection(
    context: dg.AssetExecutionContext, stage: Stage, settings: StageSettings, collection: str
) -> CollectionReport:
    """Run ``stage`` on ``collection`` and keep what it made."""
    resources = context.resources
    overrides = settings.task_overrides(stage.tasks)
    concurrency = settings.max_concurrency
    panel = tuple(
        Judge(
            judge.name,
            model_client(context, resources.llm, overrides, concurrency, collection, _choice(judge)),
        )
        for judge in stage.panel(settings)
    )
    client = (
        panel[0].client if panel else model_client(context, resources.llm, overrides, concurrency, collection)
    )
    embedder = resources.embedder if stage.embedder else None
    scope = scope_of(resources.storage, embedder, client, collection, panel=panel)
    clients = [judge.client for judge in panel] or [client]
    with model_errors_as_failures(clients, collection):
        try:
            output = stage.output(scope, settings, stage.run(scope, settings))
        except (NothingToDo, IndexMissing) as missing:
            raise nothing_to_do(collection, str(missing)) from missing
    scope.warehouse.replace_partition(collection, output.tables)
    if output.checks_of_stored is not None:
        output.checks += output.checks_of_stored()
    return _report(output, clients)


def _choice(judge) -> ModelChoice:
    return ModelChoice(judge.provider, judge.model, judge.base_url, judge.api_key_env)


def _report(output: StageOutput, clients: list[LLMClient]) -> CollectionReport:
    """The stage's report as Dagster shows it, with its clients' calls, tokens and cost."""
    metadata = {name: metadata_value(value) for name, value in output.metadata.items()}
    metadata |= _calls_metadata(clients)
    return CollectionReport(metadata=metadata, checks=[check_result(check) for check in output.checks])


def _calls_metadata(clients: list[LLMClient]) -> dict[str, Any]:
    """The calls of the stage's client, or of a panel's judges summed."""
    if len(clients) == 1:
        return llm_metadata(clients[0])
    summaries = [client.summary() for client in clients]
    total = RunSummary.from_rows(
        ", ".join(sorted({summary.provider for summary in summaries})),
        [row for client in clients for row in client.rows],
        failed_items=sum(summary.failed_items for summary in summaries),
    )
    metadata: dict[str, Any] = dict(total.as_metadata())
    metadata["llm_cost_usd"] = dg.MetadataValue.float(float(metadata["llm_cost_usd"]))
    return metadata
