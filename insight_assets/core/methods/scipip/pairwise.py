"""Pairwise win rates (Fig. 4): for one background, an idea of SciPIP and an idea of a baseline are
shown to the judge as A and B, anonymised, in both orders; on each criterion the judge prefers one
or calls a tie. A pair's outcome on a criterion counts only what both orders agree on: SciPIP wins
when it is preferred in both orders (or in one, the other a tie), loses the reverse way, and ties
otherwise; a judge that always prefers A (position bias) thus scores ties, not wins.

Pairs are made by position: SciPIP's i-th idea against the baseline's i-th, as many as the shorter
list has, so every pair shares its background.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .schemas import BASELINES, DUAL, PAIR_CRITERIA, Idea
from .tasks import SCIPIP_JUDGE_PAIR

if TYPE_CHECKING:
    from ...llm import LLMClient
    from .judging import IdeaSet

WIN, LOSS, TIE = "win", "loss", "tie"


@dataclass(frozen=True)
class PairJudgement:
    """One pair judged in both orders: each criterion's verdicts with SciPIP shown first and second
    (A/B/tie as the judge said), and the outcome for SciPIP."""

    query_id: str
    baseline: str
    position: int
    criterion: str
    scipip_first: str | None
    scipip_second: str | None
    outcome: str | None
    judge: str = ""
    error: str | None = None


def outcome(scipip_first: str, scipip_second: str) -> str:
    """SciPIP's result from the two orders' verdicts (A/B/tie): it was idea A in the first, B in
    the second."""
    score = {"A": 1, "B": -1, "tie": 0}[scipip_first] - {"A": 1, "B": -1, "tie": 0}[scipip_second]
    return WIN if score > 0 else LOSS if score < 0 else TIE


def judge_pairs(client: LLMClient, sets: Sequence[IdeaSet], judge: str = "") -> list[PairJudgement]:
    """Every SciPIP idea against each baseline's idea at the same position, in both orders."""
    pairs = [
        (found, baseline, n, mine, theirs)
        for found in sets
        for baseline in BASELINES
        for n, (mine, theirs) in enumerate(
            zip(found.ideas.get(DUAL, ()), found.ideas.get(baseline, ()), strict=False)
        )
    ]

    def text(idea: Idea) -> str:
        return f"{idea.title}: {idea.idea}"

    inputs = []
    for found, _, _, mine, theirs in pairs:
        for a, b in ((mine, theirs), (theirs, mine)):
            inputs.append(
                {
                    "background": found.background,
                    "idea_a": text(a),
                    "idea_b": text(b),
                    "context": list(found.context),
                }
            )
    batch = client.run_many(SCIPIP_JUDGE_PAIR, inputs)
    judged = []
    for k, (found, baseline, n, _, _) in enumerate(pairs):
        first, second = batch.items[2 * k], batch.items[2 * k + 1]
        failed = [item for item in (first, second) if not item.ok]
        for criterion in PAIR_CRITERIA:
            base = {"query_id": found.query_id, "baseline": baseline, "position": n, "criterion": criterion}
            if failed:
                reason = failed[0].error or failed[0].status
                judged.append(
                    PairJudgement(
                        **base, scipip_first=None, scipip_second=None, outcome=None, judge=judge, error=reason
                    )
                )
                continue
            a, b = getattr(first.value, criterion), getattr(second.value, criterion)
            judged.append(
                PairJudgement(**base, scipip_first=a, scipip_second=b, outcome=outcome(a, b), judge=judge)
            )
    return judged


def win_rates(judged: Sequence[PairJudgement]) -> list[dict]:
    """Per judge, baseline and criterion: SciPIP's share of wins, ties and losses over the pairs
    judged in both orders."""
    rows = []
    keys = dict.fromkeys((j.judge, j.baseline, j.criterion) for j in judged if j.outcome)
    for judge, baseline, criterion in keys:
        mine = [
            j.outcome
            for j in judged
            if (j.judge, j.baseline, j.criterion) == (judge, baseline, criterion) and j.outcome
        ]
        rows.append(
            {
                "judge": judge,
                "baseline": baseline,
                "criterion": criterion,
                "pairs": len(mine),
                "scipip_wins": round(mine.count(WIN) / len(mine), 3),
                "ties": round(mine.count(TIE) / len(mine), 3),
                "baseline_wins": round(mine.count(LOSS) / len(mine), 3),
            }
        )
    return rows


__all__ = ["LOSS", "TIE", "WIN", "PairJudgement", "judge_pairs", "outcome", "win_rates"]
