"""SciPIP's ideas stage (§3.3): ideas for each background by the dual path, each path alone, the direct
prompt and the AI-Scientist-style baseline."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from insight_assets.core.methods.scipip import store, tasks
from insight_assets.core.methods.scipip.backgrounds import Background
from insight_assets.core.methods.scipip.evaluation import make_queries, skipped_routes
from insight_assets.core.methods.scipip.field import ResearchField, research_field
from insight_assets.core.methods.scipip.ideas import IdeaRun, Paper, expanded_text, propose_ideas
from insight_assets.core.methods.scipip.judging import IdeaSet
from insight_assets.core.methods.scipip.retrieval import Library
from insight_assets.core.methods.scipip.schemas import DUAL, IDEA_METHODS, Idea
from insight_assets.core.methods.scipip.settings import IdeasSettings, RetrievalSettings
from insight_assets.core.methods.scipip.stages import summaries
from insight_assets.core.methods.scipip.stages.retrievals import QUERIES, RETRIEVALS, _backgrounds
from insight_assets.core.methods.scipip.stages.summaries import PAPER_TEXTS, PAPERS
from insight_assets.core.methods.scipip.tasks import IDEA_TASKS
from insight_assets.core.runtime.stage import CollectionScope, Handoff, NothingToDo, Stage
from insight_assets.core.runtime.stage_output import Json, StageOutput, preview, skipped

if TYPE_CHECKING:
    from insight_assets.core.storage.stores import Warehouse


IDEAS = "scipip_ideas"


@dataclass(frozen=True)
class Proposed:
    library: Library
    field: ResearchField
    runs: list[IdeaRun]
    papers: dict[str, Paper]  # the library's papers (title and method) by document id
    # The summarized papers' texts by document id, which the judges compare the ideas with.
    paper_texts: dict[str, str] = field(default_factory=dict)


def ideas(scope: CollectionScope, settings: IdeasSettings) -> Proposed:
    """§3.3: ideas for every background (or the first ``max_backgrounds``) by the dual path, each path alone,
    the direct prompt and the AI-Scientist-style baseline."""
    library = summaries.library(scope)
    retrieval = scope.built_settings(RETRIEVALS, RetrievalSettings)
    backgrounds = _backgrounds(scope, library, retrieval.leave_one_out)[0][: settings.max_backgrounds]
    # The entities each background's retrieval searched by: the ideas are proposed for that query.
    searched = scope.upstream(QUERIES)
    backgrounds = [
        replace(b, entities=searched[b.background_id])
        if b.entities is None and b.background_id in searched
        else b
        for b in backgrounds
    ]
    proposed = _propose(scope, library, backgrounds, settings, retrieval)
    return replace(proposed, paper_texts=scope.upstream(PAPER_TEXTS))


def _propose(
    scope: CollectionScope,
    library: Library,
    backgrounds: list[Background],
    settings: IdeasSettings,
    retrieval: RetrievalSettings,
    *,
    own_path_only: bool = False,
) -> Proposed:
    rows = scope.upstream(PAPERS)
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


def proposed_sets(proposed: Proposed) -> IdeaSets:
    """The ideas ``ideas`` proposed as the judges read them (see ``stored_idea_sets``)."""
    runs, texts = proposed.runs, proposed.paper_texts
    contexts = [
        [texts[doc] for doc in run.retrieval.selected if doc in texts] if run.retrieval else []
        for run in runs
    ]
    return IdeaSets(
        [run.idea_set(context) for run, context in zip(runs, contexts, strict=True)],
        [run.expanded_set(context) for run, context in zip(runs, contexts, strict=True)],
    )


def stored_idea_sets(warehouse: Warehouse, collection: str) -> IdeaSets:
    """The stored ideas to judge, with the retrieved papers' texts they are compared with."""
    ideas_rows, runs = store.load_ideas(warehouse, collection)
    return idea_sets_of(ideas_rows, runs, store.paper_texts(warehouse, collection))


# The ideas to judge, with the retrieved papers' texts they are compared with.
IDEA_SETS = Handoff("scipip_idea_sets", stored_idea_sets)


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


def output(scope: CollectionScope, settings: IdeasSettings, proposed: Proposed) -> StageOutput:
    """Every background's ideas by each method; no idea at all is the stage's failure, said."""
    library, field, runs = proposed.library, proposed.field, proposed.runs
    writer = scope.client.writer_label(tasks.SCIPIP_IDEAS)
    tables = store.idea_tables(scope.collection, runs, field, writer)
    idea_rows = tables["scipip_ideas"].to_pylist()
    if not idea_rows:
        raise NothingToDo(f"no idea was proposed: {'; '.join(runs[0].errors[:3])}")
    counts = {m: sum(r["method"] == m for r in idea_rows) for m in IDEA_METHODS}
    shown = [
        {"title": r["title"][:80], "inspired_by": "; ".join(r["inspired_by"])[:80]}
        for r in idea_rows
        if r["method"] == DUAL
    ][:8]
    return StageOutput(
        tables=tables,
        metadata={
            "dagster/row_count": len(idea_rows),
            "backgrounds": len(runs),
            "ideas": Json(counts),
            "stage_failures": sum(len(run.errors) for run in runs),
            "field": field.describe(),
            "ai_scientist_novel": f"{sum(bool(r.novel) for run in runs for r in run.scientist)} of "
            f"{sum(len(run.scientist) for run in runs)} ideas passed its novelty check",
            "writer": writer,
            "scipip_ideas": preview(shown, ["title", "inspired_by"]),
            **skipped(skipped_routes(library)),
        },
    )


IDEAS_STAGE = Stage(
    IDEAS,
    "scipip",
    "Research ideas for each background (the user's backgrounds.jsonl; without one, papers' own "
    "backgrounds, each paper held out): SciPIP's dual path (brainstorm + retrieved papers' methods, "
    "integrated and expanded, citing the papers that inspired them), each path alone, and a direct "
    'prompt. Offline ideas are template recombinations, marked "[offline template]".',
    IdeasSettings,
    reads=(RETRIEVALS,),
    run=ideas,
    hands=(IDEA_SETS.of(proposed_sets),),
    output=output,
    tasks=IDEA_TASKS,
    embedder=True,
)
