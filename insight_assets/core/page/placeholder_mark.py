"""The mark a chart of placeholder numbers carries, so that a chart seen alone (on the page, in the
Dagster UI, copied into a slide) cannot be read as a result: a large "PLACEHOLDER" across the plot
and the reason under its title."""

from __future__ import annotations

from typing import Any

MARK = "PLACEHOLDER"


def mark_placeholder(axes: Any, why: str) -> None:
    """Mark one matplotlib ``axes`` as showing placeholders, saying ``why`` ("no model judged")."""
    axes.text(
        0.5,
        0.5,
        MARK,
        transform=axes.transAxes,
        fontsize=30,
        color="#aa3333",
        alpha=0.3,
        rotation=20,
        ha="center",
        va="center",
        zorder=10,
    )
    axes.set_title(f"{axes.get_title()}\n({MARK.lower()}: {why})", fontsize=9, color="#aa3333")
