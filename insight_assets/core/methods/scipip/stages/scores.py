"""SciPIP's scores stage: every judge's ratings and pairwise preferences of every method's ideas."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.methods.scipip import report, store
from insight_assets.core.methods.scipip.evaluation import recall_table
from insight_assets.core.methods.scipip.judging import (
    IdeaSet,
    JudgedIdea,
    good_shares,
    judge_agreement,
    judge_ideas,
)
from insight_assets.core.methods.scipip.pairwise import PairJudgement, judge_pairs, win_rates
from insight_assets.core.methods.scipip.schemas import DUAL, EXPANDED, SHORT, SKC_FILTERED
from insight_assets.core.methods.scipip.settings import ScoresSettings
from insight_assets.core.methods.scipip.stages.ideas import IDEA_SETS, IDEAS, IdeaSets
from insight_assets.core.methods.scipip.stages.retrievals import RETRIEVALS
from insight_assets.core.methods.scipip.tasks import JUDGE_TASKS, SCIPIP_JUDGE_IDEAS
from insight_assets.core.page.headlines import Headline, headline_table
from insight_assets.core.runtime.stage import CollectionScope, NothingToDo, Stage
from insight_assets.core.runtime.stage_output import StageOutput, preview, standin_note, table, write_report

if TYPE_CHECKING:
    from insight_assets.core.llm import LLMClient


SCORES = "scipip_scores"


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
    sets = scope.upstream(IDEA_SETS)
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


def output(scope: CollectionScope, settings: ScoresSettings, result: Scored) -> StageOutput:
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


SCORES_STAGE = Stage(
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
    output=output,
    tasks=JUDGE_TASKS,
    code_version="2",
    judges=ScoresSettings.panel,
)
