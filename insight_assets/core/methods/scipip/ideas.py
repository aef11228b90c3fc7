"""Dual-path idea generation (§3.3, Figure 3), each stage one batch over every background.

1. The background is transformed (Table 8) with its entities as the technical terms.
2. *Brainstorm* path: ideas from the transformed background alone (Table 9); their entities join
   the retrieval keywords (§3.3.1).
3. Retrieval (SKC, then the filter) with those keywords; each retrieved paper's concise method
   gives an inspiration or nothing (§3.3.2); the inspirations give the *retrieval* path's ideas
   (Table 10), each naming the papers that inspired it.
4. *Integration* keeps about 5 of both paths' ideas, unmodified (Table 11); each is *expanded*
   into a problem, a method and an expected outcome (Table 12).
5. The *direct* baseline: ideas from one prompt with the original background.

A failed stage for a background is recorded and the later stages go on with what is left: a
failed brainstorm leaves the retrieval path, and the reverse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...llm import LLMClient
from .evaluation import Query
from .judging import IdeaSet
from .retrieval import DEFAULT_SETTINGS, Library, Retrieval, SciPIPSettings, retrieve
from .schemas import (
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
from .tasks import (
    SCIPIP_BRAINSTORM,
    SCIPIP_DIRECT,
    SCIPIP_ENTITIES,
    SCIPIP_EXPAND,
    SCIPIP_IDEAS,
    SCIPIP_INSPIRATION,
    SCIPIP_INTEGRATE,
    SCIPIP_TRANSFORM,
)


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
    expanded: list[DetailedIdea | None] = field(default_factory=list)
    direct: list[Idea] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def ideas(self, method: str) -> list[Idea]:
        return {
            DUAL: self.integrated,
            BRAINSTORM_ONLY: self.brainstorm,
            RETRIEVAL_ONLY: self.retrieval_ideas,
            DIRECT: self.direct,
        }[method]

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


def propose_ideas(
    client: LLMClient,
    library: Library,
    papers: Mapping[str, Paper],
    queries: Sequence[Query],
    settings: SciPIPSettings = DEFAULT_SETTINGS,
) -> list[IdeaRun]:
    """Both paths, integration and expansion, and the direct baseline, for every query; a query
    that is a collection paper's own background is answered without that paper."""
    runs = [IdeaRun(query) for query in queries]
    transformed = client.run_many(
        SCIPIP_TRANSFORM, [{"background": q.background, "keywords": list(q.entities)} for q in queries]
    )
    for run, item in zip(runs, transformed.items, strict=True):
        run.transformed = item.value.background if run.note("transform", item) else run.query.background
    _brainstorm(client, runs)
    for run in runs:
        searched = library.without(run.query.held_out) if run.query.held_out else library
        run.retrieval = retrieve(
            searched, run.query.vector, run.query.entities, settings, run.brainstorm_keywords
        )
    _retrieval_path(client, runs, papers)
    _integrate(client, runs)
    direct = client.run_many(
        SCIPIP_DIRECT, [{"background": r.query.background, "count": INTEGRATED_IDEAS} for r in runs]
    )
    for run, item in zip(runs, direct.items, strict=True):
        if run.note("direct", item):
            run.direct = list(item.value.ideas)
    return runs


def _brainstorm(client: LLMClient, runs: list[IdeaRun]) -> None:
    batch = client.run_many(
        SCIPIP_BRAINSTORM, [{"background": r.transformed, "count": BRAINSTORM_IDEAS} for r in runs]
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


def _retrieval_path(client: LLMClient, runs: list[IdeaRun], papers: Mapping[str, Paper]) -> None:
    pairs = [
        (run, doc) for run in runs for doc in run.retrieval.selected if doc in papers and papers[doc].method
    ]
    batch = client.run_many(
        SCIPIP_INSPIRATION,
        [
            {"background": run.transformed, "title": papers[doc].title, "method": papers[doc].method}
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
            }
            for r in inspired
        ],
    )
    for run, item in zip(inspired, ideas.items, strict=True):
        if run.note("retrieval ideas", item):
            run.retrieval_ideas = list(item.value.ideas)


def _integrate(client: LLMClient, runs: list[IdeaRun]) -> None:
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
            }
            for run, pool in asked
        ],
    )
    for (run, pool), item in zip(asked, batch.items, strict=True):
        if run.note("integration", item):
            run.integrated = [pool[n - 1] for n in dict.fromkeys(item.value.selected)][: INTEGRATED_IDEAS + 1]
        else:  # the paths' ideas still stand; the dual path keeps the first of each in turn
            run.integrated = pool[:INTEGRATED_IDEAS]
    expansions = [(run, idea) for run in runs for idea in run.integrated]
    batch = client.run_many(
        SCIPIP_EXPAND,
        [{"background": run.transformed, "idea": f"{idea.title}: {idea.idea}"} for run, idea in expansions],
    )
    for (run, _), item in zip(expansions, batch.items, strict=True):
        run.expanded.append(item.value if run.note("expansion", item) else None)
