"""The idea judge (Table 1): per background, every method's ideas together, anonymised and in a
seeded shuffled order (as InsightGen's judge shows methods), each rated for novelty, clarity,
feasibility and relevance (0-5) and helpfulness; Table 2 reports the share rated >= 4."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...llm import LLMClient
from .schemas import GOOD_RATING, IDEA_METHODS, RATINGS, Idea
from .tasks import SCIPIP_JUDGE_IDEAS


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
    shown_as: int  # its number in the judge's prompt
    title: str
    novelty: int | None = None
    clarity: int | None = None
    feasibility: int | None = None
    relevance: int | None = None
    helpful: bool | None = None
    rationale: str = ""
    error: str | None = None


def judge_ideas(client: LLMClient, sets: Sequence[IdeaSet], seed: int) -> list[JudgedIdea]:
    """Every idea of every method rated. A failed judge call leaves its ideas unrated, with the
    reason."""
    shown = []
    for found in sets:
        entries = [(m, n, idea) for m in IDEA_METHODS for n, idea in enumerate(found.ideas.get(m, ()))]
        random.Random(f"{seed}|{found.query_id}").shuffle(entries)
        shown.append(entries)
    asked = [(found, entries) for found, entries in zip(sets, shown, strict=True) if entries]
    batch = client.run_many(
        SCIPIP_JUDGE_IDEAS,
        [
            {
                "background": found.background,
                "ideas": [
                    {"number": number, "text": f"{idea.title}: {idea.idea}"}
                    for number, (_, _, idea) in enumerate(entries, start=1)
                ],
                "context": list(found.context),
            }
            for found, entries in asked
        ],
    )
    judged = []
    for (found, entries), item in zip(asked, batch.items, strict=True):
        ratings = {r.idea: r for r in item.value.ratings} if item.ok else {}
        for number, (method, position, idea) in enumerate(entries, start=1):
            base = {
                "query_id": found.query_id,
                "method": method,
                "position": position,
                "shown_as": number,
            }
            rating = ratings.get(number)
            if rating is None:
                judged.append(JudgedIdea(**base, title=idea.title, error=item.error or item.status))
                continue
            judged.append(
                JudgedIdea(
                    **base,
                    title=idea.title,
                    **{name: getattr(rating, name) for name in RATINGS},
                    helpful=rating.helpful,
                    rationale=rating.rationale,
                )
            )
    return judged


def good_shares(judged: Sequence[JudgedIdea]) -> list[dict]:
    """Table 2: per method, the share of its rated ideas scoring >= 4 on each rating, and helpful."""
    rows = []
    for method in IDEA_METHODS:
        rated = [j for j in judged if j.method == method and j.error is None]
        row = {"method": method, "ideas": len(rated)}
        for name in RATINGS:
            row[name] = (
                round(sum(getattr(j, name) >= GOOD_RATING for j in rated) / len(rated), 3) if rated else None
            )
        row["helpful"] = round(sum(bool(j.helpful) for j in rated) / len(rated), 3) if rated else None
        rows.append(row)
    return rows
