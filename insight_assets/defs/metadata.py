"""Small helpers that turn rows into metadata a person reads in the Dagster UI."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import dagster as dg

from insight_assets.core import stage_output
from insight_assets.core.markdown import markdown_table as core_markdown_table
from insight_assets.defs import reuse

if TYPE_CHECKING:
    from insight_assets.defs.resources import StorageResource

MAX_PREVIEW_ROWS = 50
T = TypeVar("T")


def markdown_table(rows: Sequence[dict], columns: Sequence[str], *, empty: str = "No rows.") -> str:
    """A markdown table of ``rows`` (first ``MAX_PREVIEW_ROWS``), or ``empty`` when there are none."""
    return core_markdown_table(rows, columns, empty=empty, max_rows=MAX_PREVIEW_ROWS)


def nothing_to_do(collection: str, what: str) -> dg.Failure:
    """The failure of a step that found no input: it says what is missing rather than reporting an
    empty success. Raise it: ``raise nothing_to_do(collection, "no question-answer pairs ...")``."""
    return dg.Failure(description=f"collection {collection!r}: {what}")


def items_check(check_name: str, count: int, why_none: str) -> dg.AssetCheckResult:
    """``core.stage_output.items_check`` as Dagster's check result: a warning, with the reason, when
    the inputs were there but none became an item."""
    return check_result(stage_output.items_check(check_name, count, why_none))


def metadata_value(value: Any) -> Any:
    """A report value (``core/stage_output.py``) as Dagster's metadata."""
    if isinstance(value, stage_output.Markdown):
        return dg.MetadataValue.md(value.text)
    if isinstance(value, stage_output.Json):
        return dg.MetadataValue.json(value.value)
    if isinstance(value, stage_output.FilePath):
        return dg.MetadataValue.path(value.path)
    return value


def check_result(check: stage_output.CheckOutcome) -> dg.AssetCheckResult:
    """A check's outcome as Dagster's result: an error when it fails, or a warning."""
    return dg.AssetCheckResult(
        check_name=check.name,
        passed=check.passed,
        severity=dg.AssetCheckSeverity.WARN if check.warning else dg.AssetCheckSeverity.ERROR,
        description=check.description,
        metadata={name: metadata_value(value) for name, value in check.metadata.items()},
    )


@contextlib.contextmanager
def invalid_config(asset: str) -> Iterator[None]:
    """A config's settings that fail their own checks (``ValueError``) fail the step with the
    reason: ``with invalid_config("my_answers"): return MySettings(...)``."""
    try:
        yield
    except ValueError as error:
        raise dg.Failure(description=f"Invalid {asset} config: {error}") from error


def report_metadata(place: stage_output.ReportPlace, *report: Any) -> dict[str, dg.MetadataValue]:
    """``core.stage_output.write_report`` at ``place`` (``report``: its file, text, chart and
    headline), and the metadata that shows the chart in the UI and links the report."""
    return {name: metadata_value(value) for name, value in stage_output.write_report(place, *report).items()}


def writers(storage: StorageResource, table: str, collection: str) -> str:
    """The models that wrote ``table``'s rows for ``collection`` (its ``writer`` column), joined."""
    return ", ".join(storage.warehouse.labels(table, "writer", collection))


@dataclass
class CollectionReport:
    """What building one collection's partition of an asset produced, before Dagster sees it.
    ``incomplete``: work the build left undone that the next run must try again (a failed batch);
    a failed model call or budget stop is read from the model metadata (``reuse.undone_work``)."""

    metadata: dict[str, Any]
    checks: list[dg.AssetCheckResult] = field(default_factory=list)
    data_version: str | None = None
    incomplete: str | None = None


def materialize_each(
    context: dg.AssetExecutionContext,
    storage: StorageResource,
    build: Callable[[str], CollectionReport],
    *,
    outputs_present: Callable[[str], bool] | None = None,
    reuse_builds: bool = True,
) -> dg.MaterializeResult:
    """Build every collection of the run's partitions and report them as one materialization.

    Before a collection is built, every upstream asset must have been built for it: a step whose
    upstream partition was never materialized fails at once, naming it, instead of reading empty
    tables and reporting an empty success. Each collection built is recorded for the steps after.

    A collection whose inputs (upstream data versions, config, models, code version) are those of
    its last complete build is not built again: that build's report comes back, its ``build``
    metadata saying so (see ``reuse.py``). ``outputs_present(collection)`` says whether outputs
    kept outside the warehouse and its path metadata (vector tables) are still there. A step that
    reads what no upstream asset describes (the collection's folder) builds every time:
    ``reuse_builds=False``.

    A run usually holds one collection. A single-run backfill (``dagster asset materialize
    --partition-range a...c``, or the UI) holds several: counters are summed, each collection gets
    a row in a ``collections`` table, and a check passes only if it passed everywhere.
    """
    upstream = sorted(
        name
        for key in context.assets_def.dependency_keys
        if reuse.built_by_steps(name := key.to_user_string())
    )
    reports = {}
    for collection in context.partition_keys:
        builds = storage.warehouse.builds(collection)
        _require_upstream(collection, upstream, builds)
        present = (lambda c=collection: outputs_present(c)) if outputs_present else None
        reports[collection] = _build_or_reuse(
            context, storage.warehouse, collection, builds, build, present, reuse_builds
        )
    if len(reports) == 1:
        (report,) = reports.values()
        return dg.MaterializeResult(
            metadata=report.metadata,
            check_results=report.checks,
            data_version=dg.DataVersion(report.data_version) if report.data_version else None,
        )
    return _several_collections(reports)


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
) -> CollectionReport:
    """The last complete build's report when its inputs are this run's, else ``build(collection)``,
    recorded for the next run to compare with."""
    asset = context.asset_key.to_user_string()
    inputs = reuse.step_inputs(context, builds)
    decision = (
        reuse.decide(
            builds.get(asset),
            inputs,
            lambda: warehouse.build_report(collection, asset),
            present,
            retry_failed=_retries_failed(context),
        )
        if reuse_builds
        else reuse.Reuse(None, "it reads the collection's folder")
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
    warehouse.record_build(
        collection,
        asset,
        rows=report.metadata.get("dagster/row_count"),
        data_version=report.data_version,
        run_id=context.run_id,
        inputs=inputs.to_json(),
        report=reuse.encode_report(report.metadata, report.checks, report.data_version),
        incomplete=incomplete,
        config=context.op_execution_context.op_config,
    )
    return report


def _retries_failed(context: dg.AssetExecutionContext) -> bool:
    """Whether the run asks model calls that failed for good to be asked again."""
    llm = getattr(context.resources, "llm", None)
    return bool(llm is not None and llm.retries_failed())


def _several_collections(reports: dict[str, CollectionReport]) -> dg.MaterializeResult:
    """One materialization for a run of several collections: counters summed, a row per
    collection, and each check passing only where it passed for all."""
    numeric = sorted({key for r in reports.values() for key, v in r.metadata.items() if _is_number(v)})
    metadata: dict[str, Any] = {key: sum(r.metadata.get(key, 0) for r in reports.values()) for key in numeric}
    metadata["collections"] = dg.MetadataValue.md(
        markdown_table(
            [{"collection": name, **r.metadata} for name, r in reports.items()], ["collection", *numeric]
        )
    )
    checks = []
    for check_name in dict.fromkeys(c.check_name for r in reports.values() for c in r.checks):
        results = {name: c for name, r in reports.items() for c in r.checks if c.check_name == check_name}
        failing = sorted(name for name, c in results.items() if not c.passed)
        checks.append(
            dg.AssetCheckResult(
                check_name=check_name,
                passed=not failing,
                severity=next(iter(results.values())).severity,
                metadata={"failing_collections": ", ".join(failing) or "none"},
            )
        )
    return dg.MaterializeResult(metadata=metadata, check_results=checks)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
