"""SciPIP's retrievals stage: each research background as a query over the summarized papers (SKC
retrieval)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.methods.scipip import report, store
from insight_assets.core.methods.scipip.backgrounds import BACKGROUNDS_FILE, Background, research_backgrounds
from insight_assets.core.methods.scipip.evaluation import (
    RECALL_AT,
    Query,
    leave_one_out,
    make_queries,
    recall_table,
    skipped_routes,
    why_no_recall,
)
from insight_assets.core.methods.scipip.retrieval import Library, for_library, retrieve
from insight_assets.core.methods.scipip.schemas import SKC_FILTERED
from insight_assets.core.methods.scipip.settings import RetrievalSettings
from insight_assets.core.methods.scipip.stages import summaries
from insight_assets.core.methods.scipip.tasks import SCIPIP_ENTITIES
from insight_assets.core.runtime.stage import Check, CollectionScope, Handoff, NothingToDo, Stage
from insight_assets.core.runtime.stage_output import CheckOutcome, StageOutput, items_check, preview, skipped
from insight_assets.core.startup.lazy import np

if TYPE_CHECKING:
    from insight_assets.core.jsonl import LineProblem


RETRIEVALS = "scipip_retrievals"
# The entities each background's query searched by, by query id.
QUERIES = Handoff("scipip_queries", store.query_entities)


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
    library = summaries.library(scope)
    backgrounds, problems = _backgrounds(scope, library, settings.leave_one_out)
    return Queried(library, backgrounds, problems, make_queries(scope.client, scope.embed, backgrounds))


BACKGROUNDS_READABLE = "backgrounds_readable"
RETRIEVALS_MADE = "retrievals_made"
# tau was tuned for the paper's embedder (jina-embeddings-v3); the report shows what it does on ours.
TAU_SWEEP = (0.5, 0.6, 0.7, 0.8, 0.9)


def output(scope: CollectionScope, settings: RetrievalSettings, queried: Queried) -> StageOutput:
    """The user's backgrounds' retrievals, and the leave-one-out queries' recall at each tau."""
    library, problems, queries = queried.library, queried.problems, queried.queries
    method = for_library(settings, library)
    given = [b for b in queried.backgrounds if b.held_out is None]
    references = library.references()
    held_out = [q for q in queries if q.held_out]
    recall = leave_one_out(library, held_out, references, method)
    user_rows = []
    for query in (q for q in queries if q.held_out is None):
        user_rows += report.retrieval_rows(
            scope.collection, query, retrieve(library, query.vector, query.entities, method)
        )
    used = report.settings_row(scope.collection, settings, method, library, scope.embedder.variant)
    left_out = skipped_routes(library)
    if not recall:
        left_out["leave-one-out recall"] = why_no_recall(library, settings.leave_one_out)
    sweep = _tau_sweep(library, held_out, references, method, recall)
    return StageOutput(
        tables=store.retrieval_tables(scope.collection, queries, user_rows, recall, used),
        metadata={
            "dagster/row_count": len(user_rows) + len(recall),
            "user_backgrounds": len(given),
            "leave_one_out_queries": len({r.query_id for r in recall}),
            "recall": preview(recall_table(recall), report.RECALL_COLUMNS),
            "tau_sweep": preview(sweep, report.TAU_COLUMNS),
            "tau": used["tau_source"],
            "keyword_threshold": used["keyword_source"],
            "keyword_filter": used["keyword_filter"],
            "summary_similarity": _summary_similarity(library, method.tau),
            **skipped(left_out),
        },
        checks=[
            items_check(
                RETRIEVALS_MADE,
                len(user_rows) + len(recall),
                f"no user background ({BACKGROUNDS_FILE}) and no leave-one-out query: "
                + left_out.get("leave-one-out recall", ""),
            ),
            _backgrounds_readable(problems),
        ],
    )


def _tau_row(tau: float, rows: list) -> dict:
    """What tau does: clusters and merged papers per leave-one-out query, and SKC + filter's
    recall@10."""
    mine = [r for r in rows if r.variant == SKC_FILTERED]
    return {
        "tau": tau,
        "clusters_per_query": round(statistics.mean(r.clusters for r in mine), 1) if mine else None,
        "merged_per_query": round(statistics.mean(r.merged for r in mine), 1) if mine else None,
        "skc+filter recall@10": round(statistics.mean(r.recall_at(RECALL_AT) for r in mine), 3)
        if mine
        else None,
    }


def _tau_sweep(library, held_out, references, method, recall) -> list[dict]:
    """Leave-one-out recall at each tau of ``TAU_SWEEP`` and the one used (whose ``recall`` is known)."""
    return [
        _tau_row(
            tau,
            recall
            if tau == method.tau
            else leave_one_out(library, held_out, references, method.model_copy(update={"tau": tau})),
        )
        for tau in sorted({*TAU_SWEEP, method.tau})
    ]


def _summary_similarity(library, tau: float) -> str:
    """How alike the papers' summaries are, against the filter's tau."""
    similarities = library.summary_vectors @ library.summary_vectors.T
    pairs = similarities[np.triu_indices(len(library.doc_ids), 1)]
    if not len(pairs):
        return "one paper"
    return (
        f"median {statistics.median(pairs):.3f}, max {pairs.max():.3f}, "
        f"{float((pairs >= tau).mean()):.1%} of pairs >= tau {tau}"
    )


def _backgrounds_readable(problems) -> CheckOutcome:
    return CheckOutcome(
        BACKGROUNDS_READABLE,
        passed=not [p for p in problems if "will be extracted" not in p.message],
        warning=True,
        metadata={"problems": preview([p.__dict__ for p in problems], ["line", "message"], empty="None.")},
    )


RETRIEVALS_STAGE = Stage(
    RETRIEVALS,
    "scipip",
    "SKC retrieval (semantic, keyword, co-citation; then the clustering filter) for each research "
    "background in the collection's backgrounds.jsonl and, held out in turn, for every paper's own "
    "background; each retrieved paper with the routes that found it. The leave-one-out queries are "
    "scored: recall@10 of the held-out paper's in-collection references, per retrieval variant.",
    RetrievalSettings,
    reads=("keyword_graph",),
    run=retrievals,
    hands=(QUERIES.of(lambda queried: {query.query_id: query.entities for query in queried.queries}),),
    output=output,
    tasks=(SCIPIP_ENTITIES,),
    checks=(
        Check(BACKGROUNDS_READABLE, "Every line of the collection's backgrounds.jsonl is usable."),
        Check(
            RETRIEVALS_MADE,
            "Some background (the user's, or a held-out paper's) was retrieved for.",
        ),
    ),
    embedder=True,
)
