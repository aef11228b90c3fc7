"""SciPIP's stages (see ``core/runtime/stage.py``): the work the build, the dry run and ``ask`` share, and
their declarations (``STAGES``); their settings models are in ``settings.py``. The scoring stage judges ``idea_sets`` once per
judge of its panel, each with its own client. ``ideas_for`` is what ``insight-assets ideas``, ``ask
--method scipip`` and the MCP server run: the ideas stage's own path for one background, with the
settings the collection was built with."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from insight_assets.core.ingestion.ingest import load_documents
from insight_assets.core.runtime.stage import Check, CollectionScope, NothingToDo, Stage

from ...citations import citation_links
from . import outputs, store
from .backgrounds import BACKGROUNDS_FILE, Background, research_backgrounds
from .evaluation import Query, make_queries
from .field import ResearchField, research_field
from .ideas import IdeaRun, Paper, expanded_text, propose_ideas
from .judging import IdeaSet, JudgedIdea, judge_ideas
from .pairwise import PairJudgement, judge_pairs
from .papers import PaperParts, PaperSummary, paper_parts, summarize_papers
from .retrieval import Library
from .schemas import (
    DUAL,
    EXPANDED,
    IDEA_METHODS,
    SHORT,
    Idea,
)
from .settings import IdeasSettings, RetrievalSettings, ScoresSettings, SummariesSettings
from .tasks import IDEA_TASKS, JUDGE_TASKS, SCIPIP_ENTITIES, SCIPIP_JUDGE_IDEAS, SUMMARY_TASKS

if TYPE_CHECKING:
    from ...jsonl import LineProblem
    from ...llm import LLMClient

PAPERS, PAPER_TEXTS, QUERIES, IDEA_SETS = (
    "scipip_papers",
    "scipip_paper_texts",
    "scipip_queries",
    "scipip_idea_sets",
)
SUMMARIES, RETRIEVALS, IDEAS, SCORES = "paper_summaries", "scipip_retrievals", "scipip_ideas", "scipip_scores"


@dataclass(frozen=True)
class Summarized:
    parts: list[PaperParts]  # each paper's sections as the summary read them
    summaries: list[PaperSummary]


def summaries(scope: CollectionScope, settings: SummariesSettings) -> Summarized:
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


def retrievals(scope: CollectionScope, settings: RetrievalSettings) -> Queried:
    """Each research background as a query (its vector and entities), over the summarized papers
    (``IndexMissing`` before their summaries are embedded)."""
    library = store.load_library(scope.warehouse, scope.vectors_uri, scope.embedder, scope.collection)
    backgrounds, problems = _backgrounds(scope, library, settings.leave_one_out)
    queries = make_queries(scope.client, scope.embed, backgrounds)
    scope.plan(QUERIES, {query.query_id: query.entities for query in queries})
    return Queried(library, backgrounds, problems, queries)


@dataclass(frozen=True)
class Proposed:
    library: Library
    field: ResearchField
    runs: list[IdeaRun]
    papers: dict[str, Paper]  # the library's papers (title and method) by document id


def ideas(scope: CollectionScope, settings: IdeasSettings) -> Proposed:
    """§3.3: ideas for the first ``max_backgrounds`` backgrounds by the dual path, each path alone,
    the direct prompt and the AI-Scientist-style baseline."""
    library = store.load_library(scope.warehouse, scope.vectors_uri, scope.embedder, scope.collection)
    retrieval = scope.built_settings(RETRIEVALS, RetrievalSettings)
    backgrounds = _backgrounds(scope, library, retrieval.leave_one_out)[0][: settings.max_backgrounds]
    # The entities each background's retrieval searched by: the ideas are proposed for that query.
    searched = scope.upstream(QUERIES, lambda: store.query_entities(scope.warehouse, scope.collection))
    backgrounds = [
        replace(b, entities=searched[b.background_id])
        if b.entities is None and b.background_id in searched
        else b
        for b in backgrounds
    ]
    proposed = _propose(scope, library, backgrounds, settings, retrieval)
    texts = scope.upstream(PAPER_TEXTS, lambda: store.paper_texts(scope.warehouse, scope.collection))
    scope.plan(IDEA_SETS, _planned_sets(proposed.runs, texts))
    return proposed


def ideas_for(scope: CollectionScope, backgrounds: list[Background]) -> Proposed:
    """SciPIP's own ideas (the dual path, expanded; no baselines to compare) for research
    ``backgrounds`` (a run each), with the settings the collection's ideas and retrievals were built
    with: ``insight-assets ideas``, ``ask --method scipip`` and the MCP server's ``ask`` all run this."""
    library = store.load_library(scope.warehouse, scope.vectors_uri, scope.embedder, scope.collection)
    settings = scope.built_settings(IDEAS, IdeasSettings)
    retrieval = scope.built_settings(RETRIEVALS, RetrievalSettings)
    return _propose(scope, library, backgrounds, settings, retrieval, own_path_only=True)


def _propose(
    scope: CollectionScope,
    library: Library,
    backgrounds: list[Background],
    settings: IdeasSettings,
    retrieval: RetrievalSettings,
    *,
    own_path_only: bool = False,
) -> Proposed:
    rows = scope.upstream(PAPERS, lambda: store.load_papers(scope.warehouse, scope.collection))
    papers = {row["doc_id"]: Paper(row["title"], row["method"]) for row in rows}
    named = research_field(settings.field, library.summary_vectors, scope.embed)
    queries = make_queries(scope.client, scope.embed, backgrounds)
    if own_path_only:  # SciPIP's own ideas only: no AI Scientist baseline, only the dual path expanded
        settings = settings.model_copy(update={"ai_scientist_ideas": 0})
    expand = (DUAL,) if own_path_only else IDEA_METHODS
    runs = propose_ideas(
        scope.client, library, papers, queries, retrieval, settings, field_name=named.name, expand=expand
    )
    return Proposed(library, named, runs, papers)


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


def judge(client: LLMClient, sets: IdeaSets, judge_name: str, settings: ScoresSettings) -> Judged:
    """Table 1's ratings of the expanded and the short ideas and, with ``pairwise``, Fig. 4's
    judgements of SciPIP against each baseline, by one judge (``client``)."""
    seed = settings.seed
    ratings = judge_ideas(
        client, sets.expanded, seed, form=EXPANDED, judge=judge_name, per_call=settings.expanded_per_call
    )
    ratings += judge_ideas(client, sets.short, seed, form=SHORT, judge=judge_name)
    pairs = []
    if settings.pairwise:
        pair_sets = [
            IdeaSet(e.query_id, e.background, e.ideas or s.ideas, e.context)
            for e, s in zip(sets.expanded, sets.short, strict=True)
        ]
        pairs = judge_pairs(client, pair_sets, judge=judge_name)
    return Judged(ratings, pairs)


@dataclass(frozen=True)
class Scored:
    judged: list[JudgedIdea]
    pairs: list[PairJudgement]
    names: list[str]  # the judges'


def score(scope: CollectionScope, settings: ScoresSettings) -> Scored:
    """Every judge's ratings and preferences of every method's ideas."""
    sets = idea_sets(scope)
    if not sets.short:
        raise NothingToDo("no ideas to judge: `scipip_ideas` stored none.")
    judged, pairs, names = [], [], []
    for member in scope.panel:
        name = member.name or member.client.writer_label(SCIPIP_JUDGE_IDEAS)
        made = judge(member.client, sets, name, settings)
        names.append(name)
        judged += made.ratings
        pairs += made.pairs
    return Scored(judged, pairs, names)


STAGES = (
    Stage(
        SUMMARIES,
        "scipip",
        "Every paper as SciPIP's literature database holds it: keywords (at most 5 noun phrases), a "
        "one-sentence summary, a background (two motivations), ideas (three details), a concise method "
        "and its references in the collection; the background and summary embedded into LanceDB. "
        "Offline: extractive sentences and key phrases, labelled.",
        SummariesSettings,
        reads=("parsed_documents", "citations"),
        run=summaries,
        output=outputs.summaries,
        tasks=SUMMARY_TASKS,
        kinds=("duckdb", "lancedb"),
        embedder=True,
        outputs_present=lambda vectors_uri, collection: store.summary_vectors(vectors_uri).exists(collection),
    ),
    Stage(
        RETRIEVALS,
        "scipip",
        "SKC retrieval (semantic, keyword, co-citation; then the clustering filter) for each research "
        "background in the collection's backgrounds.jsonl and, held out in turn, for every paper's own "
        "background; each retrieved paper with the routes that found it. The leave-one-out queries are "
        "scored: recall@10 of the held-out paper's in-collection references, per retrieval variant.",
        RetrievalSettings,
        reads=("keyword_graph",),
        run=retrievals,
        output=outputs.retrievals,
        tasks=(SCIPIP_ENTITIES,),
        checks=(
            Check(
                outputs.BACKGROUNDS_READABLE, "Every line of the collection's backgrounds.jsonl is usable."
            ),
            Check(
                outputs.RETRIEVALS_MADE,
                "Some background (the user's, or a held-out paper's) was retrieved for.",
            ),
        ),
        embedder=True,
    ),
    Stage(
        IDEAS,
        "scipip",
        "Research ideas for each background (the user's backgrounds.jsonl; without one, papers' own "
        "backgrounds, each paper held out): SciPIP's dual path (brainstorm + retrieved papers' methods, "
        "integrated and expanded, citing the papers that inspired them), each path alone, and a direct "
        'prompt. Offline ideas are template recombinations, marked "[offline template]".',
        IdeasSettings,
        reads=(RETRIEVALS,),
        run=ideas,
        output=outputs.ideas,
        tasks=IDEA_TASKS,
        embedder=True,
    ),
    Stage(
        SCORES,
        "scipip",
        "Every method's ideas judged as the paper's raters judged them, expanded (problem, method, "
        "expected outcome) and, as a second table, short: novelty, clarity, feasibility, relevance 0-5 "
        "and helpfulness, each method's share rated >= 4; SciPIP's pairwise win rates against each "
        "baseline (both orders, ties allowed); each judge and their agreement; leave-one-out recall; a "
        "chart and data/reports/<collection>/scipip_report.md.",
        ScoresSettings,
        reads=(IDEAS, RETRIEVALS),
        run=score,
        output=outputs.scores,
        tasks=JUDGE_TASKS,
        code_version="2",
        judges=ScoresSettings.panel,
    ),
)
