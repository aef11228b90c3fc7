"""What a stage keeps of its work, in words of its own: the tables it writes and its report.

``defs/stage_assets.py`` writes the tables (replacing the collection's partition) and turns the
report into Dagster's metadata and check results: ``Markdown`` and ``Json`` values become the UI's
markdown and JSON, a ``CheckOutcome`` the result of the check of that name the stage declares. The
helpers here are the reports' common parts (a preview table, the parts left out, a report file
with its chart, who wrote and who judged).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from insight_assets.core.llm import BudgetExceeded
from insight_assets.core.page.headlines import OFFLINE_PREFIX, Headline, played_offline, store_headline
from insight_assets.core.page.markdown import markdown_table
from insight_assets.core.startup.lazy import pa

if TYPE_CHECKING:
    from insight_assets.core.storage.stores import Warehouse

MAX_PREVIEW_ROWS = 50


@dataclass(frozen=True)
class Markdown:
    """A report value shown as markdown."""

    text: str


@dataclass(frozen=True)
class Json:
    """A report value shown as JSON."""

    value: Any


@dataclass(frozen=True)
class FilePath:
    """A report value that is a file the stage wrote."""

    path: str


@dataclass(frozen=True)
class CheckOutcome:
    """The result of one of the stage's declared checks; a failed one is an error, or with
    ``warning`` a warning."""

    name: str
    passed: bool
    metadata: Mapping[str, Any] = field(default_factory=dict)
    description: str | None = None
    warning: bool = False


@dataclass
class StageOutput:
    """What a stage keeps of one collection: ``tables`` (each replaces the collection's rows of
    the table of that name) and the report (``metadata``, ``checks``; ``checks_of_stored``: checks of
    the rows as the warehouse holds them, run once they are written). A failed model call is read
    from the calls' metadata for the next run to try again (``defs/reuse.py``)."""

    tables: dict[str, pa.Table]
    metadata: dict[str, Any]
    checks: list[CheckOutcome] = field(default_factory=list)
    checks_of_stored: Callable[[], list[CheckOutcome]] | None = None


def preview(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[str], *, empty: str = "No rows."
) -> Markdown:
    """A markdown table of ``rows`` (the first ``MAX_PREVIEW_ROWS``), or ``empty`` when there are none."""
    return Markdown(markdown_table(rows, columns, empty=empty, max_rows=MAX_PREVIEW_ROWS))


def skipped(parts: Mapping[str, str]) -> dict[str, Any]:
    """The parts of a stage's work left out and why (no citation links, a collection too small for
    a route), shown rather than left as silently missing rows."""
    rows = [{"part": part, "why": why} for part, why in parts.items()]
    return {"skipped": preview(rows, ["part", "why"], empty="Nothing."), "skipped_parts": len(rows)}


def items_check(name: str, count: int, why_none: str) -> CheckOutcome:
    """A check that the partition holds items: it fails, as a warning with the reason, when the
    inputs were there but none became an item (every model answer refused, a collection too small
    for the method). The stage then keeps zero rows: the rest of the collection goes on, and the
    empty result is said, not silent."""
    return CheckOutcome(
        name,
        passed=count > 0,
        warning=True,
        description=None if count else why_none,
        metadata={"items": count, "why_none": why_none if not count else "-"},
    )


def stop_if_over_budget(budget_error: str | BudgetExceeded | None) -> None:
    """Stop the stage when the run's budget stopped a call: nothing more is sent, and what was
    already answered stays in the cache for the next run (the asset fails saying so)."""
    if budget_error is not None:
        raise budget_error if isinstance(budget_error, BudgetExceeded) else BudgetExceeded(str(budget_error))


def table(collection: str, rows: Sequence[Mapping[str, Any]], schema: pa.Schema | None = None) -> pa.Table:
    """``rows`` as a table, each with the ``collection`` column first."""
    return pa.Table.from_pylist([{"collection": collection, **row} for row in rows], schema=schema)


class ReportsAt(Protocol):
    """Where a report goes: its collection's headline in ``warehouse``, its files under
    ``reports_dir/<collection>/``: a ``ReportPlace``, or a stage's ``CollectionScope``."""

    warehouse: Warehouse
    reports_dir: Path
    collection: str


@dataclass(frozen=True)
class ReportPlace:
    """A report's place (see ``ReportsAt``) outside a stage."""

    warehouse: Warehouse
    reports_dir: Path
    collection: str


def write_report(
    place: ReportsAt,
    markdown_file: str,
    markdown: str,
    chart_file: str,
    chart: bytes,
    chart_caption: str,
    headline: Headline,
) -> dict[str, Any]:
    """Write a method's report and its chart under ``<reports>/<collection>/``, and store its
    headline for the collection's page; the report values that show the chart and link the file."""
    warehouse, reports_dir, collection = place.warehouse, place.reports_dir, place.collection
    folder = reports_dir / collection
    folder.mkdir(parents=True, exist_ok=True)
    (folder / chart_file).write_bytes(chart)
    markdown_path = folder / markdown_file
    markdown_path.write_text(markdown, encoding="utf-8")
    store_headline(warehouse, collection, markdown_file, headline, chart, chart_caption)
    encoded = base64.b64encode(chart).decode("ascii")
    return {
        "chart": Markdown(f"![{chart_caption}](data:image/png;base64,{encoded})"),
        "report_file": FilePath(str(markdown_path.resolve())),
    }


def judge_note(judge: str, writer: str, offline_meaning: str) -> str:
    """The judge of a report, named: "self-judged" when it is a model that wrote what it judges
    (a judge grading its own texts is lenient; set one apart with the stage's ``judge_*``
    settings), ``offline_meaning`` when it is the offline stand-in."""
    if judge.startswith(OFFLINE_PREFIX):
        return f"judge: {judge} — {offline_meaning}"
    written_by = {label.strip() for label in writer.split(",") if label.strip()}
    if judge in written_by:
        return f"judge: {judge} — self-judged: the model that wrote the texts judges them"
    return f"judge: {judge}, apart from the writer ({writer or 'none recorded'})"


def standin_note(roles: Mapping[str, str]) -> str | None:
    """The roles (role -> the model label that played it) that an offline stand-in played, named
    in one note; ``None`` when a model played them all."""
    offline = [role for role, label in roles.items() if played_offline(label)]
    if not offline:
        return None
    return (
        f"offline stand-ins, not a language model: {', '.join(offline)} (texts extracted from the "
        "papers, scores lexical); set a provider (INSIGHT_ASSETS_LLM_PROVIDER=local, say) for a model"
    )
