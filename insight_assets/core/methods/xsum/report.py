"""XSum's report: mean scores per method (section references and abstract references apart), a
bar chart, and one example summary per method, as markdown for ``xsum_report.md``."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from ...markdown import markdown_table
from .schemas import SUMMARY_METHODS
from .scores import ABSTRACTS, SCORE_COLUMNS, SECTION, ScoredSummary, mean_scores

CHART_FILE = "xsum_scores.png"
# Scores on a 0-1 scale; G-Eval's 1-5 is drawn divided by 5 so one axis holds them all.
_CHART_COLUMNS = ("rouge1", "rouge2", "rougeL", "ref_f1", "semantic_recall", "geval_coverage", "checkeval")


def _number(value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def score_tables(scored: Sequence[ScoredSummary]) -> dict[str, list[dict[str, Any]]]:
    """Per reference kind that has scores, one row per method with its means."""
    return {
        kind: mean_scores(scored, SUMMARY_METHODS, kind)
        for kind in (SECTION, ABSTRACTS)
        if any(s.reference_kind == kind for s in scored)
    }


def render_chart(tables: Mapping[str, list[dict[str, Any]]]) -> bytes:
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7 * max(len(tables), 1), 4.2), dpi=100)
    FigureCanvasAgg(figure)
    for position, (kind, rows) in enumerate(tables.items()):
        axes = figure.add_subplot(1, len(tables), position + 1)
        width = 0.8 / max(len(rows), 1)
        x = np.arange(len(_CHART_COLUMNS))
        for offset, row in enumerate(rows):
            values = [(row[c] or 0.0) / (5 if c == "geval_coverage" else 1) for c in _CHART_COLUMNS]
            axes.bar(x + offset * width - 0.4 + width / 2, values, width, label=row["method"])
        labels = [c if c != "geval_coverage" else "geval/5" for c in _CHART_COLUMNS]
        axes.set_xticks(x, labels, rotation=25, ha="right", fontsize=8)
        axes.set_ylim(0, 1)
        axes.set_title(f"reference: {'related-work section' if kind == SECTION else 'the papers abstracts'}")
        axes.legend(fontsize=8)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def render_report(
    collection: str,
    tables: Mapping[str, list[dict[str, Any]]],
    examples: Sequence[Mapping[str, str]],
    notes: Sequence[str],
) -> str:
    columns = ["method", "targets", *SCORE_COLUMNS]
    parts = [f"# XSum on collection `{collection}`", ""]
    parts += [f"- {note}" for note in notes]
    for kind, rows in tables.items():
        title = (
            "Evaluation targets: against the citing paper's related-work section (our SurveySum)"
            if kind == SECTION
            else "Other targets: against the target papers' abstracts (no human reference exists)"
        )
        parts += ["", f"## {title}", "", markdown_table(rows, columns, show=_number)]
    if not tables:
        parts += ["", "No summary could be scored."]
    parts += ["", f"![mean scores]({CHART_FILE})", "", "## One target, every method", ""]
    for example in examples:
        parts += [f"### {example['method']}: {example['topic']}", "", example["rendered"], ""]
    return "\n".join(parts) + "\n"
