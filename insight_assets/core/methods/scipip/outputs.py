"""What SciPIP's stages keep (see ``core/runtime/stage_output.py``): the tables each writes (and the paper
summaries' vectors), and its report."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from insight_assets.core.embedding.models import one_torch_thread
from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.page.headlines import Headline, headline_table
from insight_assets.core.runtime.stage import CollectionScope, NothingToDo
from insight_assets.core.runtime.stage_output import (
    CheckOutcome,
    Json,
    StageOutput,
    items_check,
    preview,
    skipped,
    standin_note,
    table,
    write_report,
)
from insight_assets.core.startup.lazy import np

from . import report, store, tasks
from .backgrounds import BACKGROUNDS_FILE
from .evaluation import RECALL_AT, leave_one_out, recall_table, skipped_routes, why_no_recall
from .judging import good_shares, judge_agreement
from .pairwise import win_rates
from .retrieval import for_library, retrieve
from .schemas import DUAL, EXPANDED, IDEA_METHODS, SHORT, SKC_FILTERED

if TYPE_CHECKING:
    from .settings import IdeasSettings, RetrievalSettings, ScoresSettings, SummariesSettings
    from .stages import Proposed, Queried, Scored, Summarized

BACKGROUNDS_READABLE = "backgrounds_readable"
RETRIEVALS_MADE = "retrievals_made"
# tau was tuned for the paper's embedder (jina-embeddings-v3); the report shows what it does on ours.
TAU_SWEEP = (0.5, 0.6, 0.7, 0.8, 0.9)


def summaries(scope: CollectionScope, settings: SummariesSettings, summarized: Summarized) -> StageOutput:
    """The papers' summaries, their backgrounds and summaries embedded into their vector table."""
    parts, found = summarized.parts, summarized.summaries
    usable = [s for s in found if s.status == "ok"]
    model = scope.embedder
    with one_torch_thread():
        vectors = normalize_rows(model.embed([s.background for s in usable] + [s.summary for s in usable]))
    store.summary_vectors(scope.vectors_uri).replace(
        scope.collection, store.summary_vector_table(scope.collection, usable, vectors, model.variant)
    )
    writer = scope.client.writer_label(tasks.SCIPIP_DIGEST)
    failed = [s for s in found if s.status != "ok"]
    sample = [
        {"title": s.title[:60], "keywords": "; ".join(s.keywords), "summary": s.summary[:200]}
        for s in usable[:8]
    ]
    return StageOutput(
        tables={"scipip_papers": store.papers_table(scope.collection, found, parts, writer)},
        metadata={
            "dagster/row_count": len(usable),
            "papers_failed": len(failed),
            "failures": "; ".join(f"{s.title[:40]}: {s.error}" for s in failed[:5]) or "none",
            "without_introduction_heading": sum(p.introduction_span is None for p in parts),
            "without_method_heading": sum(p.method_span is None for p in parts),
            "writer": writer,
            "sample": preview(sample, ["title", "keywords", "summary"]),
        },
    )


def retrievals(scope: CollectionScope, settings: RetrievalSettings, queried: Queried) -> StageOutput:
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


def ideas(scope: CollectionScope, settings: IdeasSettings, proposed: Proposed) -> StageOutput:
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


def scores(scope: CollectionScope, settings: ScoresSettings, result: Scored) -> StageOutput:
    """The judges' ratings and preferences, the report's tables and chart, and its headline."""
    warehouse, collection = scope.warehouse, scope.collection
    judged, pairs, names = result.judged, result.pairs, result.names
    ideas, runs = store.load_ideas(warehouse, collection)
    recall = recall_table(store.load_recall(warehouse, collection))
    expanded_shares = good_shares([j for j in judged if j.form == EXPANDED])
    short_shares = good_shares([j for j in judged if j.form == SHORT])
    wins = win_rates(pairs)
    retrieved_with = store.load_settings(warehouse, collection)
    first_run = next(iter(runs.values()))
    judge = ", ".join(names)
    by_model = not all(name.startswith("offline") for name in names)
    notes = _score_notes(scope, names, judged, pairs, runs)
    example = {
        "background": first_run["background"],
        "ideas": [
            {"title": r["title"], "text": r["detailed_method"] or r["idea"], "inspired_by": r["inspired_by"]}
            for r in ideas
            if r["query_id"] == first_run["query_id"] and r["method"] == DUAL
        ],
    }
    tables = report.ReportTables(
        recall,
        expanded_shares,
        short_shares,
        wins,
        judge_agreement(judged),
        retrieved_with[0] if retrieved_with else None,
        _merged(warehouse, collection),
    )
    written = write_report(
        scope,
        "scipip_report.md",
        report.render_report(collection, tables, judge, notes, example, by_model=by_model),
        report.CHART_FILE,
        report.render_chart(recall, expanded_shares, wins, by_model=by_model),
        "recall, expanded idea ratings and win rates",
        _headline(scope, tables, judge, by_model, [*notes, *_retrieval_note(retrieved_with)]),
    )
    return StageOutput(
        tables={
            "scipip_scores": table(collection, [j.__dict__ for j in judged]),
            "scipip_pairs": table(collection, [p.__dict__ for p in pairs]),
        },
        metadata={"dagster/row_count": len(judged), "judge": judge, **_score_tables(tables), **written},
    )


def _score_notes(scope, names, judged, pairs, runs) -> list[str]:
    judge = ", ".join(names)
    first_run = next(iter(runs.values()))
    return [
        f"Judges: {judge}."
        + (
            " Offline, the ratings and preferences are TF-IDF stand-ins, not judgements."
            if any(n.startswith("offline") for n in names)
            else ""
        ),
        "Offline ideas are template recombinations of the background and the retrieved methods, marked as such.",
        f"Field named in the prompts: {first_run['field_source']}.",
        (
            f"{sum(j.error is not None for j in judged)} idea ratings and "
            f"{len({(p.judge, p.query_id, p.baseline, p.position) for p in pairs if p.error})} pairs could not be judged."
        ),
        report.SCIENTIST_NOTE + " " + _novelty_counts(runs.values()),
        *filter(
            None,
            [
                standin_note(
                    {"idea writer": scope.warehouse.writers("scipip_ideas", scope.collection), "judge": judge}
                )
            ],
        ),
    ]


def _retrieval_note(settings: list[dict]) -> list[str]:
    """The report lists retrieval's settings under its recall table; the collection page shows only
    the headline, so its notes carry them."""
    if not settings:
        return []
    first = settings[0]
    return [
        f"Retrieval: tau {first['tau_source']}; {first['keyword_source']}; keyword filter {first['keyword_filter']}."
    ]


def _merged(warehouse, collection: str) -> str:
    tau_sweep = store.filter_merges(warehouse, collection, SKC_FILTERED)
    if not tau_sweep:
        return "no leave-one-out query"
    return (
        f"{sum(r['merged'] or 0 for r in tau_sweep)} papers merged into another's cluster over "
        f"{len(tau_sweep)} leave-one-out queries"
    )


def _headline(scope, tables, judge: str, by_model: bool, notes: list[str]) -> Headline:
    """What the collection's page shows: the judged shares and win rates (by a model), and recall."""
    judged = (
        (
            headline_table(
                "Expanded ideas rated 4 or more, per method", tables.expanded, report.SHARE_COLUMNS
            ),
            headline_table("SciPIP against each baseline, both orders", tables.wins, report.WIN_COLUMNS),
        )
        if by_model
        else ()
    )
    return Headline(
        tables=(
            *judged,
            headline_table("Recall of the held-out paper's references", tables.recall, report.RECALL_COLUMNS),
        ),
        notes=(*([] if by_model else [report.NOT_JUDGED]), *notes),
        writer=scope.warehouse.writers("scipip_ideas", scope.collection),
        judge=judge,
    )


def _score_tables(tables) -> dict:
    """The report's tables as the step's metadata."""
    one_judge = "One judge: configure two or more `judges` to measure agreement."
    return {
        "expanded_rated_4_or_more": preview(tables.expanded, report.SHARE_COLUMNS),
        "short_rated_4_or_more": preview(tables.short, report.SHARE_COLUMNS),
        "win_rates": preview(tables.wins, report.WIN_COLUMNS, empty="No pairs judged."),
        "judge_agreement": preview(tables.agreement, report.AGREEMENT_COLUMNS, empty=one_judge),
        "recall": preview(tables.recall, report.RECALL_COLUMNS),
    }


def _novelty_counts(runs) -> str:
    checks = [check for run in runs for check in run["scientist_checks"] or []]
    novel = sum(": novel." in check for check in checks)
    return f"Its novelty check kept {novel} of {len(checks)} ideas."
