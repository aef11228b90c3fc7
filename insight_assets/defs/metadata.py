"""What a person reads in the Dagster UI: rows as markdown tables, a stage's report values and check
outcomes (``core/runtime/stage_output.py``) as Dagster's metadata and check results, and the
failures of a step that found no input or a config its settings refuse."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import dagster as dg

from insight_assets.core.page.markdown import markdown_table as core_markdown_table
from insight_assets.core.runtime import stage_output


def markdown_table(rows: Sequence[dict], columns: Sequence[str], *, empty: str = "No rows.") -> str:
    """A markdown table of ``rows`` (first ``stage_output.MAX_PREVIEW_ROWS``), or ``empty`` when there are none."""
    return core_markdown_table(rows, columns, empty=empty, max_rows=stage_output.MAX_PREVIEW_ROWS)


def nothing_to_do(collection: str, what: str) -> dg.Failure:
    """The failure of a step that found no input: it says what is missing rather than reporting an
    empty success. Raise it: ``raise nothing_to_do(collection, "no question-answer pairs ...")``."""
    return dg.Failure(description=f"collection {collection!r}: {what}")


def metadata_value(value: Any) -> Any:
    """A report value (``core/runtime/stage_output.py``) as Dagster's metadata."""
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
    """``core.runtime.stage_output.write_report`` at ``place`` (``report``: its file, text, chart and
    headline), and the metadata that shows the chart in the UI and links the report."""
    return {name: metadata_value(value) for name, value in stage_output.write_report(place, *report).items()}


def several_collections(reports: Mapping[str, Any]) -> dg.MaterializeResult:
    """One materialization for a run of several collections (each report with ``metadata`` and
    ``checks``, a ``materialization.CollectionReport``): counters summed, a row per collection, and
    each check passing only where it passed for all."""
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
