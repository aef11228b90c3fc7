"""Running a declared stage, or any asset, on a collection: built, or its last build reused (or
an earlier one restored), and reported.

``materialize_each`` builds every collection of a run's partitions (or returns a collection's last
complete build when its inputs are unchanged, see ``reuse.py``) and makes one materialization of
them; ``materialize_stage`` is that for a declared stage (``core/runtime/stage.py``): a scope and a
model client per collection (one per judge for a judging stage), the stage's work, its tables
written and its report turned into Dagster's metadata (``metadata.py``), with the model calls'
tokens and cost, and check results, each recorded for its collection's partition.

The dry run that prices the same stages is ``dry_run.py``.

Model-calling assets run in the pool ``llm`` (see ``pools.py``; limit it with ``dagster instance
concurrency set llm N`` or in the UI under Deployment -> Concurrency). However many steps run, the
calls in flight to a provider are bounded by its limit, which every step of every run on the machine
shares (the ``llm`` resource's ``max_concurrency``, see ``core/llm/concurrency.py``); an asset's own
``max_concurrency`` setting caps its batches below that.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import dagster as dg

from insight_assets.core.llm import (
    BudgetExceeded,
    ConfigurationError,
    LLMClient,
    LLMError,
    RunSummary,
    TaskParams,
)
from insight_assets.core.retrieval.index import IndexMissing
from insight_assets.core.runtime import stage_output
from insight_assets.core.runtime.stage import (
    CollectionScope,
    Judge,
    JudgeModel,
    NothingToDo,
    Stage,
    StageSettings,
)
from insight_assets.core.storage import kept_builds
from insight_assets.core.storage.stores import VectorStore
from insight_assets.defs import reuse
from insight_assets.defs.metadata import (
    check_result,
    metadata_value,
    nothing_to_do,
    several_collections,
)
from insight_assets.defs.partitions import collection_folder
from insight_assets.defs.progress import StepProgress

if TYPE_CHECKING:
    from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource


@dataclass
class CollectionReport:
    """What building one collection's partition of an asset produced, before Dagster sees it.
    ``incomplete``: work the build left undone that the next run must try again (a failed batch);
    a failed model call or budget stop is read from the model metadata (``reuse.undone_work``)."""

    metadata: dict[str, Any]
    checks: list[dg.AssetCheckResult] = field(default_factory=list)
    data_version: str | None = None
    incomplete: str | None = None
    # Every row the build wrote, by table (a declared stage's): kept for a later build that reads the
    # same inputs (``core/storage/kept_builds.py``).
    tables: dict[str, Any] | None = None


def materialize_each(
    context: dg.AssetExecutionContext,
    storage: StorageResource,
    build: Callable[[str], CollectionReport],
    *,
    outputs_present: Callable[[str], bool] | None = None,
    vectors: VectorStore | None = None,
    reuse_builds: bool = True,
) -> dg.MaterializeResult:
    """Build every collection of the run's partitions and report them as one materialization.

    Before a collection is built, every upstream asset must have been built for it: a step whose
    upstream partition was never materialized fails at once, naming it, instead of reading empty
    tables and reporting an empty success. Each collection built is recorded for the steps after.

    A collection whose inputs (upstream data versions, config, models, code version) are those of
    its last complete build is not built again: that build's report comes back, its ``build``
    metadata saying so (see ``reuse.py``). ``outputs_present(collection)`` says whether outputs
    kept outside the warehouse and its path metadata (vector tables) are still there; a step whose
    only such output is its table in ``vectors`` has it kept and restored with its rows (and is
    reused only while the table is there). A step that reads what no upstream asset describes (the
    collection's folder) builds every time: ``reuse_builds=False``.

    A run usually holds one collection. A single-run backfill (``dagster asset materialize
    --partition-range a...c``, or the UI) holds several: counters are summed, each collection gets
    a row in a ``collections`` table, and a check passes only if it passed everywhere.
    """
    upstream = sorted(
        name
        for key in context.assets_def.dependency_keys
        if reuse.built_by_steps(name := key.to_user_string())
    )
    exists = vectors.exists if vectors is not None else outputs_present
    reports = {}
    for collection in context.partition_keys:
        builds = storage.warehouse.builds(collection)
        _require_upstream(collection, upstream, builds)
        present = (lambda c=collection: exists(c)) if exists else None
        reports[collection] = _build_or_reuse(
            context, storage.warehouse, collection, builds, build, present, reuse_builds, vectors
        )
    if len(reports) == 1:
        (report,) = reports.values()
        return dg.MaterializeResult(
            metadata=report.metadata,
            check_results=report.checks,
            data_version=dg.DataVersion(report.data_version) if report.data_version else None,
        )
    return several_collections(reports)


def _require_upstream(collection: str, upstream: list[str], builds: dict) -> None:
    """Fail at once, naming them, when upstream assets were never built for ``collection``."""
    missing = [name for name in upstream if name not in builds]
    if missing:
        raise dg.Failure(
            description=(
                f"collection {collection!r}: {', '.join(f'`{name}`' for name in missing)} "
                f"{'has' if len(missing) == 1 else 'have'} not been built; materialize "
                f"{'it' if len(missing) == 1 else 'them'} (or the whole collection) first."
            )
        )


def _build_or_reuse(
    context: dg.AssetExecutionContext,
    warehouse,
    collection: str,
    builds: dict,
    build: Callable[[str], CollectionReport],
    present: Callable[[], bool] | None,
    reuse_builds: bool,
    vectors: VectorStore | None = None,
) -> CollectionReport:
    """The last complete build's report when its inputs are this run's, else ``build(collection)``,
    recorded for the next run to compare with."""
    asset = context.asset_key.to_user_string()
    inputs = reuse.step_inputs(context, builds)
    decision = reuse.step_decision(
        context, warehouse, collection, builds.get(asset), inputs, present, reuse_builds, vectors
    )
    if decision.report is not None:
        metadata, checks, data_version = reuse.decode_report(decision.report)
        context.log.debug(f"{collection}: {asset} {decision.why}")
        return CollectionReport({**reuse.without_work(metadata), "build": decision.why}, checks, data_version)
    if builds.get(asset, {}).get("inputs"):
        warehouse.forget_build_inputs(collection, asset)
    report = build(collection)
    incomplete = report.incomplete or reuse.undone_work(report.metadata)
    report.data_version = reuse.data_version(report.data_version, inputs, context.run_id, incomplete)
    report.metadata["build"] = f"built: {decision.why}"
    encoded = reuse.encode_report(report.metadata, report.checks, report.data_version)
    warehouse.record_build(
        collection,
        asset,
        rows=report.metadata.get("dagster/row_count"),
        data_version=report.data_version,
        run_id=context.run_id,
        inputs=inputs.to_json(),
        report=encoded,
        incomplete=incomplete,
        config=context.op_execution_context.op_config,
    )
    if report.tables is not None and not incomplete and (present is None or vectors is not None):
        _keep(warehouse, collection, asset, inputs, encoded, context.run_id, report, vectors)
    return report


def _keep(
    warehouse,
    collection: str,
    asset: str,
    inputs: reuse.StepInputs,
    encoded: str,
    run_id: str,
    report: CollectionReport,
    vectors: VectorStore | None,
) -> None:
    """Keep the build (all it made: its rows, and its table in ``vectors``) by its inputs."""
    kept_vectors = {}
    if vectors is not None:
        table = kept_builds.vectors_to_keep(vectors, collection)
        if table is None:  # nothing to restore it with
            return
        kept_vectors[vectors.kind] = table
    build = kept_builds.KeptBuild(
        inputs.to_json(), encoded, report.data_version, run_id, report.tables or {}, vectors=kept_vectors
    )
    kept_builds.keep(warehouse, collection, asset, build, inputs.key)


def model_client(
    context: dg.AssetExecutionContext,
    llm: LLMResource,
    overrides: dict[str, TaskParams],
    max_concurrency: int | None,
    collection: str,
    model_choice: JudgeModel | None = None,
) -> LLMClient:
    """A client whose ledger rows name this asset, partition and run; ``overrides``: the asset's
    settings for its tasks."""
    try:
        return llm.client(
            asset=context.asset_key.to_user_string(),
            partition=collection,
            run_id=context.run_id,
            task_overrides=overrides,
            max_concurrency=max_concurrency,
            logger=context.log,
            model_choice=model_choice,
            progress=StepProgress.of(context).calls,
        )
    except ConfigurationError as error:
        raise dg.Failure(description=f"The llm resource is misconfigured: {error}") from error


def scope_of(
    storage: StorageResource,
    embedder: EmbedderResource | None,
    client: LLMClient,
    collection: str,
    panel: tuple[Judge, ...] = (),
) -> CollectionScope:
    """A build's scope of ``collection`` in ``storage``'s stores, with ``client`` (``panel``: a
    judging stage's judges; ``.dry_run()`` and ``.for_question(...)`` make the other modes, see
    ``core/runtime/stage.py``)."""
    return CollectionScope(
        warehouse=storage.warehouse,
        vectors=storage.vectors,
        vectors_uri=storage.vectors_uri,
        embedder=embedder.get_embedder() if embedder is not None else None,
        client=client,
        collection=collection,
        folder=collection_folder(storage.collections_root, collection),
        panel=panel,
        reports_dir=Path(storage.reports_dir),
        adapters_dir=Path(storage.adapters_dir),
    )


def llm_metadata(client: LLMClient) -> dict[str, Any]:
    """Calls, tokens, cost and cache hits of this asset's client, as asset metadata."""
    metadata: dict[str, Any] = dict(client.summary().as_metadata())
    metadata["llm_cost_usd"] = dg.MetadataValue.float(float(metadata["llm_cost_usd"]))
    return metadata


def _over_budget(client: LLMClient, collection: str, budget_error: BudgetExceeded) -> None:
    """Fail the step cleanly when the run's budget stopped a call: nothing more is sent, and what
    was already answered stays in the cache for the next run."""
    raise dg.Failure(
        description=(
            f"{collection}: stopped by the run's LLM budget before spending more. {budget_error} "
            "Answers already received are cached; rerun with a higher budget_usd / budget_tokens on "
            "the `llm` resource to finish."
        ),
        metadata=llm_metadata(client),
    )


@contextlib.contextmanager
def model_errors_as_failures(clients: list[LLMClient], collection: str) -> Iterator[None]:
    """Turn errors that would fail every item alike (a refused key, an unknown model, the run's
    budget reached) into a step failure that says what to fix, instead of a traceback; close the
    ``clients`` after."""
    try:
        yield
    except BudgetExceeded as error:
        _over_budget(clients[0], collection, error)
    except LLMError as error:
        raise dg.Failure(description=f"{collection}: {error}", metadata=llm_metadata(clients[0])) from error
    finally:
        for client in clients:
            client.close()


def materialize_stage(
    context: dg.AssetExecutionContext, stage: Stage, settings: StageSettings
) -> dg.MaterializeResult:
    """Run ``stage`` with ``settings`` on every collection of the run (or reuse its last build) and
    keep what it made."""
    storage = context.resources.storage
    vectors = stage.vectors(storage.vectors_uri) if stage.vectors else None
    return materialize_each(
        context,
        storage,
        lambda collection: _build_collection(context, stage, settings, collection),
        vectors=vectors,
    )


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
            model_client(context, resources.llm, overrides, concurrency, collection, judge),
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
            output = stage.output(scope, settings, scope.run(stage, settings))
        except (NothingToDo, IndexMissing) as missing:
            raise nothing_to_do(collection, str(missing)) from missing
    scope.warehouse.replace_partition(collection, output.tables)
    if output.checks_of_stored is not None:
        output.checks += output.checks_of_stored()
    report = _report(output, clients)
    report.tables, report.data_version = output.tables, kept_builds.content_version(output.tables)
    return report


def _report(output: stage_output.StageOutput, clients: list[LLMClient]) -> CollectionReport:
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


# Every stage an asset was made of, by name (``stage_assets.stage_asset`` records each): what the dry
# run prices once the catalog has loaded.
_DECLARED: dict[str, Stage] = {}


def declared_stages() -> list[Stage]:
    """The stages assets were made of so far (all of them once ``defs.catalog`` has loaded)."""
    return list(_DECLARED.values())


def declare(stage: Stage) -> Stage:
    """Record ``stage`` as made into an asset; the stage already recorded under its name, if any."""
    return _DECLARED.setdefault(stage.name, stage)
