"""What a method's report puts first, kept for the collection's page.

Every method's report step writes its markdown report and chart under data/reports/<collection>/
and stores its *headline* here: the tables it leads with, its chart, its notes, and which model
wrote and which judged. The collection's page (``collection_report``) reads them back, one per
report, so that it needs no method's own tables or code.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from insight_assets.core.startup.lazy import pa

if TYPE_CHECKING:
    from insight_assets.core.storage.stores import Warehouse

# How an offline stand-in names itself as a writer or judge: "offline (extractive)".
OFFLINE_PREFIX = "offline"

TABLE = "report_headlines"


@dataclass(frozen=True)
class HeadlineTable:
    caption: str
    columns: tuple[str, ...]
    rows: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Headline:
    """A report's headline: ``writer`` and ``judge`` are model labels ("offline (extractive)",
    "openai/gpt-4o-mini"), empty when the method has none."""

    tables: tuple[HeadlineTable, ...]
    notes: tuple[str, ...] = ()
    writer: str = ""
    judge: str = ""


@dataclass(frozen=True)
class StoredHeadline:
    report: str  # the markdown report's file name, e.g. "xsum_report.md"
    headline: Headline
    chart: bytes = field(repr=False)
    chart_caption: str


def headline_table(caption: str, rows: Sequence[dict], columns: Sequence[str]) -> HeadlineTable:
    """The ``columns`` of ``rows`` (missing cells empty), values JSON-safe (rounded floats)."""

    def cell(value):
        if isinstance(value, float):
            return round(value, 4)
        if isinstance(value, (str, int, bool)) or value is None:
            return value
        return str(value)

    return HeadlineTable(
        caption, tuple(columns), tuple({c: cell(row.get(c)) for c in columns} for row in rows)
    )


def store_headline(
    warehouse: Warehouse, collection: str, report: str, headline: Headline, chart: bytes, chart_caption: str
) -> None:
    """Replace ``collection``'s headline of ``report``."""
    row = {
        "collection": collection,
        "report": report,
        "tables": json.dumps(
            [
                {"caption": t.caption, "columns": list(t.columns), "rows": list(t.rows)}
                for t in headline.tables
            ]
        ),
        "chart": chart,
        "chart_caption": chart_caption,
        "notes": list(headline.notes),
        "writer": headline.writer,
        "judge": headline.judge,
    }
    warehouse.replace_rows(
        TABLE, "collection = ? AND report = ?", [collection, report], pa.Table.from_pylist([row])
    )


def load_headlines(warehouse: Warehouse, collection: str) -> dict[str, StoredHeadline]:
    """``collection``'s stored headlines, by report file name."""
    found = {}
    for row in warehouse.rows(f"SELECT * FROM {TABLE} WHERE collection = ?", [collection]):
        tables = tuple(
            HeadlineTable(t["caption"], tuple(t["columns"]), tuple(t["rows"]))
            for t in json.loads(row["tables"])
        )
        headline = Headline(tables, tuple(row["notes"] or ()), row["writer"] or "", row["judge"] or "")
        found[row["report"]] = StoredHeadline(
            row["report"], headline, row["chart"] or b"", row["chart_caption"]
        )
    return found


def played_offline(label: str) -> bool:
    """Whether an offline stand-in played a role (``label`` may name several writers)."""
    return any(part.strip().startswith(OFFLINE_PREFIX) for part in label.split(","))


def measured_note(measured: Sequence[str], need_a_model: Sequence[str], offline_why: str | None) -> str:
    """Which numbers of a report are measured, and which need a model: placeholders until a model
    runs when ``offline_why`` says why (an offline stand-in made them), else judged by the model."""
    line = "measured: " + ", ".join(measured)
    if not need_a_model:
        return line
    if offline_why:
        return f"{line}; placeholders until a model runs: {', '.join(need_a_model)} ({offline_why})"
    return f"{line}; judged by a model: {', '.join(need_a_model)}"
