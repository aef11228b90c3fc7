"""A chart of placeholder numbers says so on the chart itself, and a method that answered nothing
has no bar and no place in the legend: what the page shows is what was measured."""

from __future__ import annotations

from insight_assets.core.methods.insight_rag.report import chart_bars
from insight_assets.core.methods.insightgen import report as insightgen_report
from insight_assets.core.methods.scipip import report as scipip_report
from insight_assets.core.page.placeholder_mark import MARK


def _marked(figure) -> list[bool]:
    return [any(text.get_text() == MARK for text in axes.texts) for axes in figure.axes]


def test_insightgen_scores_of_no_model_carry_the_placeholder_mark_on_every_panel():
    scores = [
        {
            "judge": "offline",
            "level": "set",
            "panel": "baselines",
            "method": method,
            "novelty": 3.0,
            "overall": 3.0,
        }
        for method in ("insightgen", "direct")
    ]
    assert _marked(insightgen_report.chart_figure(scores, placeholders=True)) == [True]
    assert _marked(insightgen_report.chart_figure(scores, placeholders=False)) == [False]


def test_scipip_ratings_and_wins_of_no_model_are_marked_and_the_measured_recall_is_not():
    recall = [{"variant": "skc", "recall@10": 0.5}]
    shares = [
        {
            "judge": "offline",
            "method": "scipip",
            "ideas": 3,
            **dict.fromkeys(scipip_report.SHARE_COLUMNS[3:], 0.5),
        }
    ]
    wins = [
        {
            "judge": "offline",
            "baseline": "direct",
            "pairs": 4,
            "scipip_wins": 0.5,
            "ties": 0.25,
            "baseline_wins": 0.25,
        }
    ]
    assert _marked(scipip_report.chart_figure(recall, shares, wins, by_model=False)) == [False, True, True]
    assert _marked(scipip_report.chart_figure(recall, shares, wins, by_model=True)) == [False, False, False]


def test_a_method_that_answered_nothing_has_no_bar_and_no_legend_entry():
    rows = [
        {"kind": "buried", "method": "rag@1", "exact_match": 0.5},
        {"kind": "buried", "method": "insight-rag:parametric", "exact_match": None},
        {"kind": "matching", "method": "rag@1", "exact_match": 0.75},
        {"kind": "matching", "method": "vanilla", "exact_match": 0.0},
    ]
    kinds, methods, heights = chart_bars(rows)
    assert kinds == ["buried", "matching"] and methods == ["rag@1", "vanilla"]
    assert ("buried", "vanilla") not in heights and heights[("matching", "vanilla")] == 0.0
