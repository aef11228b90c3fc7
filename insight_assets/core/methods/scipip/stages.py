"""SciPIP's stages (see ``core/stage.py``): the work the build and the dry run share. The scoring
asset judges ``idea_sets`` once per judge, each with its own client."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...citations import citation_links
from ...ingest import load_documents
from ...jsonl import LineProblem
from ...llm import LLMClient
from ...stage import CollectionScope, NothingToDo
from . import store
from .backgrounds import BACKGROUNDS_FILE, Background, research_backgrounds
from .evaluation import Query, make_queries
from .field import ResearchField, research_field
from .ideas import IdeaRun, IdeaSettings, Paper, expanded_text, propose_ideas
from .judging import IdeaSet, JudgedIdea, judge_ideas
from .pairwise import PairJudgement, judge_pairs
from .papers import PaperParts, PaperSummary, paper_parts, summarize_papers
from .retrieval import Library, SciPIPSettings
from .schemas import EXPANDED, SHORT, Idea

PAPERS, PAPER_TEXTS, QUERIES, IDEA_SETS = (
    "scipip_papers",
    "scipip_paper_texts",
    "scipip_queries",
    "scipip_idea_sets",
)


@dataclass(frozen=True)
class Summarized:
    parts: list[PaperParts]  # each paper's sections as the summary read them
    summaries: list[PaperSummary]


def summaries(scope: CollectionScope) -> Summarized:
    """Every paper's summary, keywords, background and method (Appendix A), knowing its citations."""
    documents = [d for d in load_documents(scope.warehouse, scope.collection) if d.abstract or d.text.strip()]
    if not documents:
        raise NothingToDo("no parsed paper to summarize.")
    references: dict[str, list[str]] = {}
    for citing, cited in citation_links(scope.warehouse, scope.collection):
        references.setdefault(citing, []).append(cited)
    parts = [paper_parts(document) for document in documents]
    summarized = summarize_papers(scope.client, parts, references)
    usable = [summary for summary in summarized if summary.status == "ok"]
    if not usable:
        raise NothingToDo(f"no paper could be summarized: {summarized[0].error}")
    scope.plan(PAPERS, [{"doc_id": s.doc_id, "title": s.title, "method": s.method} for s in usable])
    scope.plan(PAPER_TEXTS, {s.doc_id: f"{s.summary} {s.method}" for s in summarized})
    return Summarized(parts, summarized)


def _backgrounds(
    scope: CollectionScope, library: Library, leave_one_out: bool
) -> tuple[list[Background], list]:
    found, problems = research_backgrounds(scope.folder, library.backgrounds, leave_one_out)
    if not found:
        raise NothingToDo(f"no research background: {BACKGROUNDS_FILE} is empty or absent.")
    return found, problems


@dataclass(frozen=True)
class Queried:
    library: Library
    backgrounds: list[Background]
    problems: list[LineProblem]  # the unusable lines of backgrounds.jsonl
    queries: list[Query]


def retrievals(scope: CollectionScope, leave_one_out: bool) -> Queried:
    """Each research background as a query (its vector and entities), over the summarized papers
    (``IndexMissing`` before their summaries are embedded)."""
    library = store.load_library(scope.warehouse, scope.vectors_uri, scope.embedder, scope.collection)
    backgrounds, problems = _backgrounds(scope, library, leave_one_out)
    queries = make_queries(scope.client, scope.embed, backgrounds)
    scope.plan(QUERIES, {query.query_id: query.entities for query in queries})
    return Queried(library, backgrounds, problems, queries)


@dataclass(frozen=True)
class Proposed:
    library: Library
    field: ResearchField
    runs: list[IdeaRun]


def ideas(
    scope: CollectionScope,
    settings: SciPIPSettings,
    *,
    leave_one_out: bool,
    max_backgrounds: int,
    field: str | None,
    scientist_ideas: int,
    scientist_reflections: int,
) -> Proposed:
    """§3.3: ideas for the first ``max_backgrounds`` backgrounds by the dual path, each path alone,
    the direct prompt and the AI-Scientist-style baseline."""
    library = store.load_library(scope.warehouse, scope.vectors_uri, scope.embedder, scope.collection)
    backgrounds = _backgrounds(scope, library, leave_one_out)[0][:max_backgrounds]
    # The entities each background's retrieval searched by: the ideas are proposed for that query.
    searched = scope.upstream(QUERIES, lambda: store.query_entities(scope.warehouse, scope.collection))
    backgrounds = [
        replace(b, entities=searched[b.background_id])
        if b.entities is None and b.background_id in searched
        else b
        for b in backgrounds
    ]
    rows = scope.upstream(PAPERS, lambda: store.load_papers(scope.warehouse, scope.collection))
    papers = {row["doc_id"]: Paper(row["title"], row["method"]) for row in rows}
    named = research_field(field, library.summary_vectors, scope.embed)
    queries = make_queries(scope.client, scope.embed, backgrounds)
    runs = propose_ideas(
        scope.client,
        library,
        papers,
        queries,
        settings,
        IdeaSettings(named.name, scientist_ideas, scientist_reflections),
    )
    texts = scope.upstream(PAPER_TEXTS, lambda: store.paper_texts(scope.warehouse, scope.collection))
    scope.plan(IDEA_SETS, _planned_sets(runs, texts))
    return Proposed(library, named, runs)


@dataclass(frozen=True)
class IdeaSets:
    """Each background's ideas by method as the judges read them: short and expanded."""

    short: list[IdeaSet]
    expanded: list[IdeaSet]


def _planned_sets(runs: list[IdeaRun], texts: dict[str, str]) -> IdeaSets:
    contexts = [
        [texts[doc] for doc in run.retrieval.selected if doc in texts] if run.retrieval else []
        for run in runs
    ]
    return IdeaSets(
        [run.idea_set(context) for run, context in zip(runs, contexts, strict=True)],
        [run.expanded_set(context) for run, context in zip(runs, contexts, strict=True)],
    )


def idea_sets(scope: CollectionScope) -> IdeaSets:
    """The ideas to judge, with the retrieved papers' texts they are compared with."""

    def stored() -> IdeaSets:
        ideas_rows, runs = store.load_ideas(scope.warehouse, scope.collection)
        return idea_sets_of(ideas_rows, runs, store.paper_texts(scope.warehouse, scope.collection))

    return scope.upstream(IDEA_SETS, stored)


def idea_sets_of(ideas_rows: list[dict], runs: dict[str, dict], texts: dict[str, str]) -> IdeaSets:
    """The stored ideas (``store.load_ideas``) as the judges read them, each background's with the
    texts of the papers its retrieval selected."""
    short, expanded = [], []
    for query_id, run in runs.items():
        by_method: dict[str, list] = {}
        detailed: dict[str, list] = {}
        for row in (r for r in ideas_rows if r["query_id"] == query_id):
            by_method.setdefault(row["method"], []).append(
                Idea(title=row["title"], idea=row["idea"], inspired_by=row["inspired_by"])
            )
            if row["detailed_method"]:
                text = expanded_text(row["problem"], row["detailed_method"], row["expected_outcome"])
                detailed.setdefault(row["method"], []).append(Idea(title=row["title"], idea=text))
        context = [texts[doc] for doc in run["retrieved_doc_ids"] if doc in texts]
        short.append(IdeaSet(query_id, run["background"], by_method, context))
        expanded.append(IdeaSet(query_id, run["background"], detailed, context))
    return IdeaSets(short, expanded)


@dataclass(frozen=True)
class Judged:
    """One judge's ratings and pairwise preferences."""

    ratings: list[JudgedIdea]
    pairs: list[PairJudgement]


def judge(
    client: LLMClient, sets: IdeaSets, judge_name: str, *, seed: int, expanded_per_call: int, pairwise: bool
) -> Judged:
    """Table 1's ratings of the expanded and the short ideas and, with ``pairwise``, Fig. 4's
    judgements of SciPIP against each baseline, by one judge (``client``)."""
    ratings = judge_ideas(
        client, sets.expanded, seed, form=EXPANDED, judge=judge_name, per_call=expanded_per_call
    )
    ratings += judge_ideas(client, sets.short, seed, form=SHORT, judge=judge_name)
    pairs = []
    if pairwise:
        pair_sets = [
            IdeaSet(e.query_id, e.background, e.ideas or s.ideas, e.context)
            for e, s in zip(sets.expanded, sets.short, strict=True)
        ]
        pairs = judge_pairs(client, pair_sets, judge=judge_name)
    return Judged(ratings, pairs)
