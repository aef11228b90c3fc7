"""The idea judge (Table 1): per background, every method's ideas together, anonymised and in a
seeded shuffled order (as InsightGen's judge shows methods), each rated for novelty, clarity,
feasibility and relevance (0-5) and helpfulness; Table 2 reports the share rated >= 4. The ideas
are judged in their short form and, as the paper's raters saw them, expanded (problem, method,
expected outcome); long expansions are shown a few per call, the shuffled order cut into groups.
Several judges' agreement is Kendall's tau on the ideas both rated (``judge_agreement``)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .schemas import GOOD_RATING, IDEA_METHODS, RATINGS, SHORT, Idea
from .tasks import SCIPIP_JUDGE_IDEAS

if TYPE_CHECKING:
    from ...llm import LLMClient


@dataclass(frozen=True)
class IdeaSet:
    """One background's ideas by method, and the texts the offline judge compares them with (the
    retrieved papers)."""

    query_id: str
    background: str
    ideas: Mapping[str, Sequence[Idea]]
    context: Sequence[str] = ()


@dataclass(frozen=True)
class JudgedIdea:
    query_id: str
    method: str
    position: int  # the idea's place in its method's list
    shown_as: int  # its place in the shuffled order shown to the judge
    title: str
    form: str = SHORT
    judge: str = ""
    novelty: int | None = None
    clarity: int | None = None
    feasibility: int | None = None
    relevance: int | None = None
    helpful: bool | None = None
    rationale: str = ""
    error: str | None = None


def judge_ideas(
    client: LLMClient,
    sets: Sequence[IdeaSet],
    seed: int,
    *,
    form: str = SHORT,
    judge: str = "",
    per_call: int | None = None,
) -> list[JudgedIdea]:
    """Every idea of every method rated, ``per_call`` ideas per call at most (default: one call per
    background). A failed judge call leaves its ideas unrated, with the reason."""
    groups = []
    for found in sets:
        entries = [(m, n, idea) for m in IDEA_METHODS for n, idea in enumerate(found.ideas.get(m, ()))]
        random.Random(f"{seed}|{found.query_id}").shuffle(entries)
        numbered = list(enumerate(entries, start=1))
        size = per_call or len(numbered) or 1
        groups += [(found, numbered[start : start + size]) for start in range(0, len(numbered), size)]
    batch = client.run_many(
        SCIPIP_JUDGE_IDEAS,
        [
            {
                "background": found.background,
                "ideas": [
                    {"number": number, "text": f"{idea.title}: {idea.idea}"}
                    for number, (_, (_, _, idea)) in enumerate(group, start=1)
                ],
                "context": list(found.context),
            }
            for found, group in groups
        ],
    )
    judged = []
    for (found, group), item in zip(groups, batch.items, strict=True):
        ratings = {r.idea: r for r in item.value.ratings} if item.ok else {}
        for number, (shown_as, (method, position, idea)) in enumerate(group, start=1):
            base = {
                "query_id": found.query_id,
                "method": method,
                "position": position,
                "shown_as": shown_as,
                "title": idea.title,
                "form": form,
                "judge": judge,
            }
            rating = ratings.get(number)
            if rating is None:
                judged.append(JudgedIdea(**base, error=item.error or item.status))
                continue
            judged.append(
                JudgedIdea(
                    **base,
                    **{name: getattr(rating, name) for name in RATINGS},
                    helpful=rating.helpful,
                    rationale=rating.rationale,
                )
            )
    return judged


def good_shares(judged: Sequence[JudgedIdea]) -> list[dict]:
    """Table 2: per judge and method, the share of its rated ideas scoring >= 4 on each rating, and
    helpful."""
    rows = []
    for judge in dict.fromkeys(j.judge for j in judged):
        for method in IDEA_METHODS:
            rated = [j for j in judged if j.judge == judge and j.method == method and j.error is None]
            rows.append(_share_row(judge, method, rated))
    return rows


def _share_row(judge: str, method: str, rated: Sequence[JudgedIdea]) -> dict:
    row: dict = {"judge": judge, "method": method, "ideas": len(rated)}
    for name in RATINGS:
        row[name] = (
            round(sum(getattr(j, name) >= GOOD_RATING for j in rated) / len(rated), 3) if rated else None
        )
    row["helpful"] = round(sum(bool(j.helpful) for j in rated) / len(rated), 3) if rated else None
    return row


def judge_agreement(judged: Sequence[JudgedIdea]) -> list[dict]:
    """For every pair of judges and each rating: Kendall's tau (tau-b, ties allowed) between their
    ratings of the ideas both rated, with how many; ``None`` when either judge gave one value only."""
    from scipy.stats import kendalltau

    rated = [j for j in judged if j.error is None]
    judges = list(dict.fromkeys(j.judge for j in rated))
    rows = []
    for i, a in enumerate(judges):
        for b in judges[i + 1 :]:
            mine = {(j.form, j.query_id, j.method, j.position): j for j in rated if j.judge == a}
            theirs = {(j.form, j.query_id, j.method, j.position): j for j in rated if j.judge == b}
            shared = sorted(set(mine) & set(theirs))
            row = {"judge_a": a, "judge_b": b, "ideas": len(shared)}
            for name in RATINGS:
                x = [getattr(mine[k], name) for k in shared]
                y = [getattr(theirs[k], name) for k in shared]
                varied = len(set(x)) > 1 and len(set(y)) > 1
                row[name] = round(float(kendalltau(x, y).statistic), 3) if varied else None
            rows.append(row)
    return rows
