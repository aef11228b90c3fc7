"""Aggregating judge rows: repetitions averaged, mean scores per method, and the agreement of two
judges."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations
from typing import Any

from .schemas import JudgeRow


def _mean_or_none(values: Sequence[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return statistics.fmean(present) if present else None


def average_repetitions(rows: Sequence[JudgeRow]) -> list[JudgeRow]:
    """Rows without a repetition, unchanged, then one row per (judge, level, panel, question, method)
    of the rows with one, holding the mean of each criterion (groups in order of first appearance)."""
    groups: dict[tuple[str, str, str, str, str], list[JudgeRow]] = defaultdict(list)
    for row in rows:
        if row.repetition is not None:
            groups[(row.judge, row.level, row.panel, row.question_id, row.method)].append(row)
    return [row for row in rows if row.repetition is None] + [_averaged(group) for group in groups.values()]


def _averaged(group: list[JudgeRow]) -> JudgeRow:
    first = group[0]
    return JudgeRow(
        judge=first.judge,
        level=first.level,
        question_id=first.question_id,
        method=first.method,
        novelty=statistics.fmean(row.novelty for row in group),
        diversity=_mean_or_none([row.diversity for row in group]),
        relevance=statistics.fmean(row.relevance for row in group),
        depth=statistics.fmean(row.depth for row in group),
        overall=statistics.fmean(row.overall for row in group),
        rationale=f"mean of {len(group)} repetitions",
        panel=first.panel,
    )


def mean_scores(rows: Sequence[JudgeRow]) -> list[dict[str, Any]]:
    """Per (judge, level, panel, method): the mean of each criterion and of ``overall`` over
    questions, and ``count``, the number of questions. Repetitions are averaged per question first,
    so every question weighs the same. ``diversity`` is ``None`` where no row has it."""
    groups: dict[tuple[str, str, str, str], list[JudgeRow]] = defaultdict(list)
    for row in average_repetitions(rows):
        groups[(row.judge, row.level, row.panel, row.method)].append(row)
    return [
        {
            "judge": judge,
            "level": level,
            "panel": panel,
            "method": method,
            "novelty": statistics.fmean(row.novelty for row in group),
            "diversity": _mean_or_none([row.diversity for row in group]),
            "relevance": statistics.fmean(row.relevance for row in group),
            "depth": statistics.fmean(row.depth for row in group),
            "overall": statistics.fmean(row.overall for row in group),
            "count": len(group),
        }
        for (judge, level, panel, method), group in sorted(groups.items())
    ]


def _overall_by_question(
    rows: Sequence[JudgeRow], judge: str, level: str
) -> dict[tuple[str, str], dict[str, float]]:
    """Per (question, panel): each method's overall score (a method judged in two panels was
    ranked against different methods in each)."""
    scores: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for row in average_repetitions([row for row in rows if row.judge == judge and row.level == level]):
        scores[row.question_id, row.panel][row.method] = row.overall
    return scores


def _sign(value: float) -> int:
    return (value > 0) - (value < 0)


def judge_agreement(
    rows: Sequence[JudgeRow], judge_a: str, judge_b: str, level: str = "set"
) -> dict[str, Any]:
    """How far two judges agree on the ranking of methods, per question (and panel), on ``overall``.

    Only questions both judges scored are compared, on the methods both scored (at least two);
    ``questions`` counts (question, panel) pairs.

    - ``pairwise_agreement``: over all method pairs of all questions, the fraction that both judges
      order the same way. A tie counts as an order of its own: a pair agrees when both judges
      tie it or both prefer the same method; one judge's tie against the other's preference
      disagrees.
    - ``top_method_agreement``: the fraction of questions where the judges' best methods overlap
      (with ties, any shared best method counts).
    - ``spearman_median`` / ``spearman_mean``: Spearman's rho (``scipy.stats.spearmanr``, ties
      ranked by their average) per question. Rho is undefined when a judge gave every method the
      same score; those questions are counted in ``constant_questions`` and left out of rho.

    Statistics are ``None`` when nothing could be compared.
    """
    from scipy.stats import spearmanr  # here: importing scipy.stats costs every process a second

    scores_a = _overall_by_question(rows, judge_a, level)
    scores_b = _overall_by_question(rows, judge_b, level)
    agreeing_pairs = pairs = questions = top_agreements = constant = 0
    rhos: list[float] = []
    for key in sorted(set(scores_a) & set(scores_b)):
        methods = sorted(set(scores_a[key]) & set(scores_b[key]))
        if len(methods) < 2:
            continue
        a = [scores_a[key][method] for method in methods]
        b = [scores_b[key][method] for method in methods]
        questions += 1
        for i, j in combinations(range(len(methods)), 2):
            pairs += 1
            agreeing_pairs += _sign(a[i] - a[j]) == _sign(b[i] - b[j])
        best_a = {method for method, score in zip(methods, a, strict=True) if score == max(a)}
        best_b = {method for method, score in zip(methods, b, strict=True) if score == max(b)}
        top_agreements += bool(best_a & best_b)
        if len(set(a)) == 1 or len(set(b)) == 1:
            constant += 1
        else:
            rhos.append(float(spearmanr(a, b).statistic))
    return {
        "judge_a": judge_a,
        "judge_b": judge_b,
        "level": level,
        "questions": questions,
        "pairs": pairs,
        "pairwise_agreement": agreeing_pairs / pairs if pairs else None,
        "top_method_agreement": top_agreements / questions if questions else None,
        "spearman_median": statistics.median(rhos) if rhos else None,
        "spearman_mean": statistics.fmean(rhos) if rhos else None,
        "spearman_questions": len(rhos),
        "constant_questions": constant,
    }
