"""Markdown tables, for asset metadata and written reports."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any


def markdown_table(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    *,
    empty: str = "No rows.",
    max_rows: int | None = None,
    show: Callable[[Any], str] | None = None,
) -> str:
    """A markdown table of ``rows`` (the first ``max_rows``, and a line saying how many more), or
    ``empty`` when there are none. ``show`` turns a value into its cell's text; by default a value
    is its ``str`` and a missing one (None) an empty cell."""
    if not rows:
        return empty

    def cell(value: Any) -> str:
        text = show(value) if show is not None else "" if value is None else str(value)
        return text.replace("|", "\\|").replace("\n", " ")

    shown = rows if max_rows is None else rows[:max_rows]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(row.get(column, "")) for column in columns) + " |" for row in shown]
    if len(rows) > len(shown):
        lines.append(f"\n… and {len(rows) - len(shown)} more rows.")
    return "\n".join(lines)
