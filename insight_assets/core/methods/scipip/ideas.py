"""Dual-path idea generation (§3.3, Figure 3), each stage one batch over every background.

1. The background is transformed (Table 8) with its entities as the technical terms.
2. *Brainstorm* path: ideas from the transformed background alone (Table 9); their entities join
   the retrieval keywords (§3.3.1).
3. Retrieval (SKC, then the filter) with those keywords; each retrieved paper's concise method
   gives an inspiration or nothing (§3.3.2); the inspirations give the *retrieval* path's ideas
   (Table 10), each naming the papers that inspired it.
4. *Integration* keeps about 5 of both paths' ideas, unmodified (Table 11).
5. The baselines: the *direct* prompt with the original background, and the AI Scientist's idea
   stage (``ai_scientist``).
6. Every method's ideas are *expanded* into a problem, a method and an expected outcome (Table 12),
   the demonstration being the concise method of the first retrieved paper that has one (§3.3:
   "we retrieve a concise method section from an existing paper as a demonstration"), so that the
   judge rates what the paper's raters rated, the same way for every method.

Every prompt names the collection's field (``field``), not "AI".

A failed stage for a background is recorded and the later stages go on with what is left: a
failed brainstorm leaves the retrieval path, and the reverse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .ai_scientist import ScientistRecord, related_texts, scientist_ideas
from .field import DEFAULT_FIELD
from .judging import IdeaSet
from .retrieval import DEFAULT_SETTINGS, Library, Retrieval, retrieve
from .schemas import (
    AI_SCIENTIST,
    BRAINSTORM_IDEAS,
    BRAINSTORM_ONLY,
    DIRECT,
    DUAL,
    IDEA_METHODS,
    INITIAL_IDEAS,
    INTEGRATED_IDEAS,
    RETRIEVAL_ONLY,
    DetailedIdea,
    Idea,
)
from .settings import IdeasSettings, RetrievalSettings
from .tasks import (
    EXPANSION_EXAMPLE,
    SCIPIP_BRAINSTORM,
    SCIPIP_DIRECT,
    SCIPIP_ENTITIES,
    SCIPIP_EXPAND,
    SCIPIP_IDEAS,
    SCIPIP_INSPIRATION,
    SCIPIP_INTEGRATE,
    SCIPIP_TRANSFORM,
)

if TYPE_CHECKING:
    from ...llm import LLMClient
    from .evaluation import Query


@dataclass(frozen=True)
class Paper:
    """What idea generation reads of a retrieved paper."""

    title: str
    method: str


@dataclass
class IdeaRun:
    """Everything idea generation made for one background, and what failed."""

    query: Query
    transformed: str = ""
    brainstorm: list[Idea] = field(default_factory=list)
    brainstorm_keywords: list[str] = field(default_factory=list)
    retrieval: Retrieval | None = None
    inspirations: list[dict[str, str]] = field(default_factory=list)  # title, text, doc_id
    retrieval_ideas: list[Idea] = field(default_factory=list)
    integrated: list[Idea] = field(default_factory=list)
    direct: list[Idea] = field(default_factory=list)
    scientist: list[ScientistRecord] = field(default_factory=list)  # every idea, novel or not
    expanded: dict[str, list[DetailedIdea | None]] = field(default_factory=dict)
    example: dict[str, str] = field(default_factory=dict)  # Table 12's demonstration
    errors: list[str] = field(default_factory=list)

    def ideas(self, method: str) -> list[Idea]:
        """``method``'s ideas; the AI Scientist's are those its novelty check kept."""
        return {
            DUAL: self.integrated,
            BRAINSTORM_ONLY: self.brainstorm,
            RETRIEVAL_ONLY: self.retrieval_ideas,
            DIRECT: self.direct,
            AI_SCIENTIST: [r.as_idea() for r in self.scientist if r.novel],
        }[method]

    def expanded_set(self, context: Sequence[str]) -> IdeaSet:
        """The expanded ideas by method, as the judge reads them."""
        expanded = {
            method: [
                Idea(
                    title=idea.title,
                    idea=expanded_text(detail.problem, detail.method, detail.expected_outcome),
                )
                for idea, detail in zip(self.ideas(method), self.expanded.get(method, []), strict=False)
                if detail is not None
            ]
            for method in IDEA_METHODS
        }
        return IdeaSet(self.query.query_id, self.query.background, expanded, tuple(context))

    def expansion(self, method: str, position: int) -> DetailedIdea | None:
        found = self.expanded.get(method, [])
        return found[position] if position < len(found) else None

    def idea_set(self, context: Sequence[str]) -> IdeaSet:
        return IdeaSet(
            self.query.query_id,
            self.query.background,
            {m: self.ideas(m) for m in IDEA_METHODS},
            tuple(context),
        )

    def note(self, stage: str, item) -> bool:
        if not item.ok:
            self.errors.append(f"{stage}: {item.error or item.status}")
        return item.ok


def expanded_text(problem: str, method: str, expected_outcome: str) -> str:
    """An expanded idea as the judge reads it."""
    return f"Problem: {problem}\nMethod: {method}\nExpected outcome: {expected_outcome}"


def propose_ideas(
    client: LLMClient,
    library: Library,
    papers: Mapping[str, Paper],
    queries: Sequence[Query],
    settings: RetrievalSettings = DEFAULT_SETTINGS,
    ideas: IdeasSettings | None = None,
    *,
    field_name: str = DEFAULT_FIELD,
    expand: Sequence[str] = IDEA_METHODS,
) -> list[IdeaRun]:
    """Both paths and integration, the baselines (the AI Scientist's when ``ideas`` asks for its
    ideas), and the ideas of the ``expand`` methods expanded, for every query, the prompts naming
    ``field_name``; a query that is a collection paper's own background is answered without that
    paper."""
    ideas = ideas or IdeasSettings()
    runs = [IdeaRun(query) for query in queries]
    # The direct baseline reads only the background: it goes out with the first stage.
    transformed, direct = client.run_together(
        [
            (
                SCIPIP_TRANSFORM,
                [
                    {"background": q.background, "keywords": list(q.entities), "field": field_name}
                    for q in queries
                ],
            ),
            (
                SCIPIP_DIRECT,
                [
                    {"background": q.background, "count": INTEGRATED_IDEAS, "field": field_name}
                    for q in queries
                ],
            ),
        ]
    )
    for run, item in zip(runs, transformed.items, strict=True):
        run.transformed = item.value.background if run.note("transform", item) else run.query.background
    _brainstorm(client, runs, field_name)
    for run in runs:
        searched = library.without(run.query.held_out) if run.query.held_out else library
        run.retrieval = retrieve(
            searched, run.query.vector, run.query.entities, settings, run.brainstorm_keywords
        )

    def retrieval_path_and_integration() -> None:
        _retrieval_path(client, runs, papers, field_name)
        _integrate(client, runs, field_name)

    def ai_scientist() -> tuple[list, list] | None:
        if not ideas.ai_scientist_ideas:
            return None
        return scientist_ideas(
            client,
            [run.query.background for run in runs],
            [related_texts(run.retrieval.selected, papers) for run in runs],
            field_name,
            ideas.ai_scientist_ideas,
            ideas.ai_scientist_reflections,
        )

    # The AI Scientist's rounds read only the background and the retrieved papers: they go out
    # beside the retrieval path and the integration (which alone write to the runs meanwhile).
    _, scientist = client.side_by_side([retrieval_path_and_integration, ai_scientist])
    for run, item in zip(runs, direct.items, strict=True):
        if run.note("direct", item):
            run.direct = list(item.value.ideas)
    if scientist is not None:
        for run, mine, failed in zip(runs, *scientist, strict=True):
            run.scientist, run.errors = mine, run.errors + failed
    _expand(client, runs, papers, field_name, tuple(expand))
    return runs


def _brainstorm(client: LLMClient, runs: list[IdeaRun], field_name: str) -> None:
    batch = client.run_many(
        SCIPIP_BRAINSTORM,
        [{"background": r.transformed, "count": BRAINSTORM_IDEAS, "field": field_name} for r in runs],
    )
    for run, item in zip(runs, batch.items, strict=True):
        if run.note("brainstorm", item):
            run.brainstorm = list(item.value.ideas)
    asked = [r for r in runs if r.brainstorm]
    keywords = client.run_many(
        SCIPIP_ENTITIES, [{"content": " ".join(f"{i.title}. {i.idea}" for i in r.brainstorm)} for r in asked]
    )
    for run, item in zip(asked, keywords.items, strict=True):
        if run.note("brainstorm keywords", item):
            run.brainstorm_keywords = list(item.value.entities)


def _retrieval_path(
    client: LLMClient, runs: list[IdeaRun], papers: Mapping[str, Paper], field_name: str
) -> None:
    pairs = [
        (run, doc) for run in runs for doc in run.retrieval.selected if doc in papers and papers[doc].method
    ]
    batch = client.run_many(
        SCIPIP_INSPIRATION,
        [
            {
                "background": run.transformed,
                "title": papers[doc].title,
                "method": papers[doc].method,
                "field": field_name,
            }
            for run, doc in pairs
        ],
    )
    for (run, doc), item in zip(pairs, batch.items, strict=True):
        if run.note(f"inspiration from {papers[doc].title[:40]}", item) and item.value.useful:
            run.inspirations.append(
                {"title": papers[doc].title, "text": item.value.inspiration, "doc_id": doc}
            )
    inspired = [r for r in runs if r.inspirations]
    ideas = client.run_many(
        SCIPIP_IDEAS,
        [
            {
                "background": r.transformed,
                "inspirations": [{"title": i["title"], "text": i["text"]} for i in r.inspirations],
                "count": INITIAL_IDEAS,
                "field": field_name,
            }
            for r in inspired
        ],
    )
    for run, item in zip(inspired, ideas.items, strict=True):
        if run.note("retrieval ideas", item):
            run.retrieval_ideas = list(item.value.ideas)


def _integrate(client: LLMClient, runs: list[IdeaRun], field_name: str) -> None:
    pooled = [(run, run.brainstorm + run.retrieval_ideas) for run in runs]
    asked = [(run, pool) for run, pool in pooled if pool]
    batch = client.run_many(
        SCIPIP_INTEGRATE,
        [
            {
                "background": run.transformed,
                "ideas": [
                    {"number": n, "title": idea.title, "idea": idea.idea}
                    for n, idea in enumerate(pool, start=1)
                ],
                "count": INTEGRATED_IDEAS,
                "field": field_name,
            }
            for run, pool in asked
        ],
    )
    for (run, pool), item in zip(asked, batch.items, strict=True):
        if run.note("integration", item):
            run.integrated = [pool[n - 1] for n in dict.fromkeys(item.value.selected)][: INTEGRATED_IDEAS + 1]
        else:  # the paths' ideas still stand; the dual path keeps the first of each in turn
            run.integrated = pool[:INTEGRATED_IDEAS]


def _expand(
    client: LLMClient,
    runs: list[IdeaRun],
    papers: Mapping[str, Paper],
    field_name: str,
    methods: Sequence[str],
) -> None:
    """Table 12 for every method's ideas, each background's demonstration the concise method of its
    first retrieved paper that has one (else the built-in example)."""
    for run in runs:
        shown = next((doc for doc in run.retrieval.selected if doc in papers and papers[doc].method), None)
        run.example = (
            {"example_title": papers[shown].title, "example_method": papers[shown].method}
            if shown
            else dict(EXPANSION_EXAMPLE)
        )
    expansions = [(run, method, idea) for run in runs for method in methods for idea in run.ideas(method)]
    batch = client.run_many(
        SCIPIP_EXPAND,
        [
            {
                "background": run.transformed,
                "idea": f"{idea.title}: {idea.idea}",
                "field": field_name,
                **run.example,
            }
            for run, _, idea in expansions
        ],
    )
    for (run, method, _), item in zip(expansions, batch.items, strict=True):
        run.expanded.setdefault(method, []).append(
            item.value if run.note(f"expansion ({method})", item) else None
        )
