"""The method comparison report: mean judge scores per method as tables, a bar chart and examples."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from insight_assets.core.page.markdown import markdown_table
from insight_assets.core.page.placeholder_mark import mark_placeholder

from .judge.schemas import JUDGE_PANELS

CRITERIA = ("novelty", "diversity", "relevance", "depth", "overall")
CHART_FILE = "method_scores.png"
# The judge that runs without a model (``judge/offline.py``): it shares its criterion with the
# offline generator, so no ranking is made from its scores.
OFFLINE_JUDGE = "offline"
NOT_JUDGED = (
    "Not judged: needs a model. The offline judge scores novelty as 5·(1 − similarity to the answer), "
    "which is what the offline generator optimises when it picks sentences unlike the answer, so its "
    "order follows from the two formulas, not from the methods. Its scores below are placeholders until "
    "a model judges (a provider for the `llm` resource, or `judges` in `judge_scores`' config)."
)


@dataclass(frozen=True)
class MethodReport:
    ranking: list[dict[str, Any]]  # the first model judge's ranking (set level when judged), best first
    scores_table: str
    examples_markdown: str
    chart_png: bytes
    markdown: str


def _number(value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def _table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    return markdown_table(rows, columns, show=_number)


def ranking(scores: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per panel (the paper's comparisons, in its order), methods by mean ``overall``, best first,
    for the first model judge (alphabetically) at set level, or at insight level when the set level
    was not judged; none without a model judge."""
    judges = {row["judge"] for row in scores} - {OFFLINE_JUDGE}
    if not judges:
        return []
    judge = min(judges)
    levels = {row["level"] for row in scores if row["judge"] == judge}
    level = "set" if "set" in levels else "insight"
    chosen = [row for row in scores if row["judge"] == judge and row["level"] == level]
    return [
        {
            "panel": panel,
            "rank": rank,
            "method": row["method"],
            "overall": round(row["overall"], 3),
            "judge": judge,
            "level": level,
        }
        for panel in panel_order(chosen)
        for rank, row in enumerate(
            sorted(
                (row for row in chosen if row["panel"] == panel),
                key=lambda row: (-row["overall"], row["method"]),
            ),
            start=1,
        )
    ]


def panel_order(scores: Sequence[Mapping[str, Any]]) -> list[str]:
    """The panels of ``scores``: the paper's in its order, then the others by name."""
    found = {row["panel"] for row in scores}
    papers = [name for name, _ in JUDGE_PANELS if name in found]
    return papers + sorted(found - set(papers))


def render_chart(scores: Sequence[Mapping[str, Any]], placeholders: bool = False) -> bytes:
    """``chart_figure`` as a PNG."""
    buffer = io.BytesIO()
    chart_figure(scores, placeholders).savefig(buffer, format="png")
    return buffer.getvalue()


def chart_figure(scores: Sequence[Mapping[str, Any]], placeholders: bool = False) -> Any:
    """Grouped bars: per (judge, level, panel), each method's mean score on each criterion; with
    ``placeholders`` (no model judged), each panel carries the placeholder mark."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    panels = sorted({(row["judge"], row["level"], row["panel"]) for row in scores})
    figure = Figure(figsize=(6.5 * max(len(panels), 1), 4.2), dpi=100)
    FigureCanvasAgg(figure)
    for position, (judge, level, panel) in enumerate(panels):
        axes = figure.add_subplot(1, len(panels), position + 1)
        rows = sorted(
            (row for row in scores if (row["judge"], row["level"], row["panel"]) == (judge, level, panel)),
            key=lambda r: r["method"],
        )
        criteria = [name for name in CRITERIA if any(row.get(name) is not None for row in rows)]
        width = 0.8 / max(len(criteria), 1)
        x = np.arange(len(rows))
        for offset, criterion in enumerate(criteria):
            values = [row.get(criterion) or 0.0 for row in rows]
            axes.bar(x + offset * width - 0.4 + width / 2, values, width, label=criterion)
        axes.set_xticks(x, [row["method"] for row in rows], rotation=20, ha="right", fontsize=8)
        axes.set_ylim(0, 5)
        axes.set_ylabel("mean score (0-5)")
        axes.set_title(f"{judge} judge, {level} level, {panel}", fontsize=10)
        axes.legend(fontsize=7, ncols=len(criteria), loc="upper center")
        if placeholders:
            mark_placeholder(axes, "no model judged")
    figure.tight_layout()
    return figure


def _examples(examples: Sequence[Mapping[str, Any]]) -> str:
    """Each example question with every method's first insight beside the others."""
    blocks, by_question = [], {}
    for row in examples:
        by_question.setdefault(row["question_id"], []).append(row)
    for rows in by_question.values():
        first = rows[0]
        answer = " ".join(first["answer"].split())
        blocks.append(
            f"**Q:** {first['question']}\n\n**A:** {answer[:400]}{'…' if len(answer) > 400 else ''}\n\n"
            + _table(
                [{"method": row["method"], "insight": f"{row['hook']}: {row['body']}"} for row in rows],
                ["method", "insight"],
            )
        )
    return "\n\n".join(blocks) or "No insights."


COST_COLUMNS = ["method", "questions", "context_tokens", "retrieval_calls", "retrieval_seconds"]
RANKING_COLUMNS = ["panel", "rank", "method", "overall", "judge", "level"]


def render_method_report(
    collection: str,
    scores: Sequence[Mapping[str, Any]],
    examples: Sequence[Mapping[str, Any]],
    costs: Sequence[Mapping[str, Any]] = (),
    notes: Sequence[str] = (),
) -> MethodReport:
    """``scores`` are ``judge.mean_scores`` rows; ``examples`` rows carry question_id, question,
    answer, method, hook and body (one insight per method and question); ``costs`` one row per
    method (``COST_COLUMNS``, means per question); ``notes`` what a reader needs to weigh them."""
    ranked = ranking(scores)
    panels = panel_order(scores)
    scores_table = _table(
        sorted(
            scores, key=lambda row: (row["judge"], row["level"], panels.index(row["panel"]), -row["overall"])
        ),
        ["judge", "level", "panel", "method", *CRITERIA, "count"],
    )
    examples_markdown = _examples(examples)
    markdown = "\n\n".join(
        [
            f"# Insight methods on `{collection}`",
            (
                "Mean judge scores (0-5) per method; set level shows the methods' insight sets to the "
                "judge together, insight level one sampled insight per method (ten repetitions). As in "
                "the paper, each panel is judged in prompts of its own: `baselines` (Table 2) InsightGen "
                "and §5.1's four baselines, `advanced_rag` (Table 4) InsightGen and RQ5's three RAG "
                "pipelines. `overall` is the judge's own overall rating (the offline judge's is the "
                "mean of its criteria)."
            ),
            "\n".join(f"- {note}" for note in notes),
            "## Ranking\n\n" + (_table(ranked, RANKING_COLUMNS) if ranked else NOT_JUDGED),
            ("## Scores\n\n" if ranked else "## Scores (placeholders until a model judges)\n\n")
            + scores_table,
            (
                "## Cost per question\n\nContext tokens the insight prompt read; the model calls and "
                "seconds the RAG baselines' retrieval needed (every method then makes one insight call, "
                "the chain-of-thought methods sharing one intent call).\n\n" + _table(costs, COST_COLUMNS)
            ),
            f"![mean scores per method]({CHART_FILE})",
            "## Examples\n\n" + examples_markdown,
        ]
    )
    return MethodReport(
        ranked,
        scores_table,
        examples_markdown,
        render_chart(scores, placeholders=not ranked),
        markdown + "\n",
    )
