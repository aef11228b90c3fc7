"""An AI-Scientist-style baseline (Lu et al., 2024, "The AI Scientist", its idea stage,
``generate_ideas.py``), run on the same research background as SciPIP, as the paper's Fig. 4
compares them.

Followed: ideas are generated one at a time, each prompt listing the ideas already generated so the
next one differs; each idea is a JSON of name, title, experiment outline and self-rated
interestingness, feasibility and novelty (1-10) after a "thought"; each idea goes through rounds of
self-reflection (three, as its launch script sets) that stop early when the model says it is done;
then a novelty check, and only ideas judged novel are kept.
Changed: the task is the research background instead of a code template and its experiment.py (as
the SciPIP paper did for a fair comparison, inferring backgrounds for the AI Scientist's ideas); the
novelty check reads the collection's papers that SKC retrieved for the background (title and
concise method) in one round, where the original searches Semantic Scholar for up to ten rounds
with queries of its own (this project runs offline, and the collection is the literature).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .schemas import Idea, ScientistIdea
from .tasks import SCIPIP_AI_SCIENTIST_IDEA, SCIPIP_AI_SCIENTIST_NOVELTY, SCIPIP_AI_SCIENTIST_REFLECT

if TYPE_CHECKING:
    from ...llm import LLMClient

# The related papers' methods are cut to this many characters in the novelty prompt.
RELATED_CHARACTERS = 600


@dataclass
class ScientistRecord:
    """One AI Scientist idea: as reflected on, how many rounds it took, and its novelty check."""

    idea: ScientistIdea
    rounds: int
    novel: bool | None = None
    reason: str = ""

    def as_idea(self) -> Idea:
        return Idea(title=self.idea.title, idea=self.idea.experiment)


def scientist_ideas(
    client: LLMClient,
    backgrounds: Sequence[str],
    related: Sequence[Sequence[str]],
    field: str,
    count: int,
    reflections: int,
) -> tuple[list[list[ScientistRecord]], list[list[str]]]:
    """For each background, ``count`` ideas each reflected on up to ``reflections`` times and
    checked for novelty against ``related`` (that background's related papers as texts); and the
    errors per background. Each step is one batch over the backgrounds still going."""
    records: list[list[ScientistRecord]] = [[] for _ in backgrounds]
    errors: list[list[str]] = [[] for _ in backgrounds]
    for _ in range(count):
        drafts = client.run_many(
            SCIPIP_AI_SCIENTIST_IDEA,
            [
                {"background": b, "previous": [r.idea.title for r in records[n]], "field": field}
                for n, b in enumerate(backgrounds)
            ],
        )
        current: dict[int, ScientistRecord] = {}
        for n, item in enumerate(drafts.items):
            if item.ok:
                current[n] = ScientistRecord(item.value.idea, 0)
            else:
                errors[n].append(f"ai-scientist idea: {item.error or item.status}")
        going = set(current)
        for round_number in range(1, reflections + 1):
            asked = sorted(going)
            batch = client.run_many(
                SCIPIP_AI_SCIENTIST_REFLECT,
                [
                    {
                        "background": backgrounds[n],
                        "idea": current[n].idea.model_dump(),
                        "round": round_number,
                        "rounds": reflections,
                        "field": field,
                    }
                    for n in asked
                ],
            )
            for n, item in zip(asked, batch.items, strict=True):
                if not item.ok:  # the idea as it stood before this round stays
                    errors[n].append(f"ai-scientist reflection {round_number}: {item.error or item.status}")
                    going.discard(n)
                    continue
                current[n] = ScientistRecord(item.value.idea, round_number)
                if item.value.done:
                    going.discard(n)
        for n, record in current.items():
            records[n].append(record)
    _check_novelty(client, records, related, field, errors)
    return records, errors


def _check_novelty(
    client: LLMClient,
    records: list[list[ScientistRecord]],
    related: Sequence[Sequence[str]],
    field: str,
    errors: list[list[str]],
) -> None:
    asked = [(n, record) for n, mine in enumerate(records) for record in mine]
    batch = client.run_many(
        SCIPIP_AI_SCIENTIST_NOVELTY,
        [
            {
                "idea": f"{record.idea.title}: {record.idea.experiment}",
                "papers": [text[:RELATED_CHARACTERS] for text in related[n]],
                "field": field,
            }
            for n, record in asked
        ],
    )
    for (n, record), item in zip(asked, batch.items, strict=True):
        if item.ok:
            record.novel, record.reason = item.value.novel, item.value.reason
        else:
            errors[n].append(f"ai-scientist novelty check: {item.error or item.status}")


def related_texts(retrieved: Sequence[str], papers: Mapping[str, object]) -> list[str]:
    """The retrieved papers as the novelty check reads them: title and concise method."""
    return [f"{papers[doc].title}: {papers[doc].method}" for doc in retrieved if doc in papers]
