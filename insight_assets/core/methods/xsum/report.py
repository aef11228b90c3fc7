"""XSum's report: mean scores per method (section references and abstract references apart), a
bar chart, and each method's best and worst summary with their scores, as markdown for
``xsum_report.md``."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from insight_assets.core.page.markdown import markdown_table

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


# What ranks a method's summaries for its best and worst: G-Eval coverage, the paper's headline
# judge score, then ROUGE-L recall (ties, and summaries the judge could not score); ROUGE-L alone
# when no model judged (the offline judge's coverage is a placeholder).
RANKED_BY = ("geval_coverage", "rougeL")
RANKED_BY_OFFLINE = ("rougeL",)


def best_and_worst(
    scored: Sequence[ScoredSummary],
    texts: Mapping[tuple[str, str], Mapping[str, str]],
    ranked_by: Sequence[str] = RANKED_BY,
) -> list[dict[str, Any]]:
    """Per method, its best and its worst scored summary (one when it has one) by ``ranked_by``,
    with its scores; ``texts[(target_id, method)]`` holds the summary's ``topic`` and ``rendered`` text."""

    def rank(summary: ScoredSummary) -> tuple[float, ...]:
        return tuple(-1.0 if summary.scores.get(c) is None else float(summary.scores[c]) for c in ranked_by)

    shown = []
    for method in SUMMARY_METHODS:
        mine = sorted((s for s in scored if s.method == method), key=rank, reverse=True)
        picks = [("best", mine[0]), ("worst", mine[-1])] if len(mine) > 1 else [("only", s) for s in mine]
        for which, summary in picks:
            text = texts.get((summary.target_id, method), {})
            shown.append(
                {
                    "method": method,
                    "which": which,
                    "topic": text.get("topic", summary.target_id),
                    "reference_kind": summary.reference_kind,
                    "scores": summary.scores,
                    "rendered": text.get("rendered", ""),
                }
            )
    return shown


COST_COLUMNS = ["method", "calls", "input_tokens", "output_tokens", "seconds"]


def cost_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per method, in the methods' order: its summary step's cost per target."""
    by_method = {row["method"]: row for row in rows}
    return [dict(by_method[m]) for m in SUMMARY_METHODS if m in by_method]


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
    costs: Sequence[Mapping[str, Any]] = (),
    ranked_by: Sequence[str] = RANKED_BY,
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
    if costs:
        parts += [
            "",
            "## Cost per target of the summary step",
            "",
            (
                "Model calls (cache hits and repairs included), tokens and wall seconds; xsum's questions "
                "and answers are built before this step (`xsum_questions`, `xsum_answers`) and cost more."
            ),
            "",
            markdown_table(costs, COST_COLUMNS, show=_number),
        ]
    parts += [
        "",
        f"![mean scores]({CHART_FILE})",
        "",
        f"## Each method's best and worst summary (ranked by {', then '.join(ranked_by)})",
        "",
    ]
    for example in examples:
        numbers = ", ".join(f"{c} {_number(example['scores'].get(c))}" for c in SCORE_COLUMNS)
        parts += [
            f"### {example['method']}, {example['which']}: {example['topic']}",
            "",
            f"*Against the {'related-work section' if example['reference_kind'] == SECTION else 'abstracts'}: {numbers}*",
            "",
            example["rendered"],
            "",
        ]
    return "\n".join(parts) + "\n"
