"""SciPIP's idea assets: the dual path's ideas for each background (and its baselines), their scores and the report."""

import dagster as dg
import pyarrow as pa
from pydantic import Field

from insight_assets.core.headlines import Headline, headline_table
from insight_assets.core.llm import LLMClient, RunSummary
from insight_assets.core.methods import scipip
from insight_assets.core.methods.scipip import report, stages, store
from insight_assets.core.methods.scipip.evaluation import skipped_routes
from insight_assets.core.methods.scipip.schemas import EXPANDED, SHORT
from insight_assets.core.stage import CollectionScope
from insight_assets.defs.metadata import (
    CollectionReport,
    markdown_table,
    materialize_each,
    nothing_to_do,
    skipped_metadata,
    standin_note,
    write_report,
    writers,
)
from insight_assets.defs.model_calls import (
    JudgeCallConfig,
    JudgeModel,
    collection_scope,
    llm_metadata,
    model_errors_as_failures,
    run_stage,
)
from insight_assets.defs.partitions import existing_collection_folder
from insight_assets.defs.pools import LLM_POOL, pooled
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource

# tau was tuned for the paper's embedder (jina-embeddings-v3); the report shows what it does on ours.
from insight_assets.defs.scipip.assets import SCIPIP_GROUP, SciPIPRetrievalConfig, scipip_retrievals

# -- ideas -----------------------------------------------------------------------------------------


class SciPIPIdeasConfig(SciPIPRetrievalConfig):
    """§3.3's dual path, each path alone and the direct baseline; retrieval as `scipip_retrievals`."""

    TASKS = scipip.IDEA_TASKS

    max_backgrounds: int = Field(
        default=5,
        ge=1,
        description="Backgrounds to propose ideas for: the user's first, then papers' own (held out).",
    )
    field: str | None = Field(
        default=None,
        description="The research field the prompts name; unset: inferred from the papers' summaries.",
    )
    ai_scientist_ideas: int = Field(
        default=scipip.schemas.INTEGRATED_IDEAS,
        ge=0,
        description="Ideas per background of the AI-Scientist-style baseline (0: no such baseline).",
    )
    ai_scientist_reflections: int = Field(
        default=scipip.schemas.AI_SCIENTIST_REFLECTIONS,
        ge=0,
        description="Self-reflection rounds per AI Scientist idea (its launch script's 3).",
    )

    def stage(self, scope: CollectionScope) -> stages.Proposed:
        return stages.ideas(
            scope,
            self.settings(),
            leave_one_out=self.leave_one_out,
            max_backgrounds=self.max_backgrounds,
            field=self.field,
            scientist_ideas=self.ai_scientist_ideas,
            scientist_reflections=self.ai_scientist_reflections,
        )


@dg.asset(kinds={"duckdb"}, deps=[scipip_retrievals], code_version="1", **pooled(LLM_POOL), **SCIPIP_GROUP)
def scipip_ideas(
    context: dg.AssetExecutionContext,
    config: SciPIPIdeasConfig,
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
) -> dg.MaterializeResult:
    """Research ideas for each background (the user's backgrounds.jsonl; without one, papers' own
    backgrounds, each paper held out): SciPIP's dual path (brainstorm + retrieved papers' methods,
    integrated and expanded, citing the papers that inspired them), each path alone, and a direct
    prompt. Offline ideas are template recombinations, marked "[offline template]"."""
    config.settings()  # an invalid config fails before any collection is built
    return materialize_each(
        context, storage, lambda collection: _ideas(context, config, storage, llm, embedder, collection)
    )


def _ideas(context, config, storage, llm, embedder, collection) -> CollectionReport:
    existing_collection_folder(storage.collections_root, collection)
    scope = collection_scope(context, storage, llm, config, collection, embedder)
    proposed, client, warehouse = run_stage(config, scope), scope.client, scope.warehouse
    library, field, runs = proposed.library, proposed.field, proposed.runs
    writer = client.writer_label(scipip.tasks.SCIPIP_IDEAS)
    tables = scipip.store.idea_tables(collection, runs, field, writer)
    idea_rows = tables["scipip_ideas"].to_pylist()
    if not idea_rows:
        raise nothing_to_do(collection, f"no idea was proposed: {'; '.join(runs[0].errors[:3])}")
    warehouse.replace_partition(collection, tables)
    counts = {m: sum(r["method"] == m for r in idea_rows) for m in scipip.schemas.IDEA_METHODS}
    preview = [
        {"title": r["title"][:80], "inspired_by": "; ".join(r["inspired_by"])[:80]}
        for r in idea_rows
        if r["method"] == scipip.schemas.DUAL
    ][:8]
    return CollectionReport(
        metadata={
            "dagster/row_count": len(idea_rows),
            "backgrounds": len(runs),
            "ideas": dg.MetadataValue.json(counts),
            "stage_failures": sum(len(run.errors) for run in runs),
            "field": field.describe(),
            "ai_scientist_novel": f"{sum(bool(r.novel) for run in runs for r in run.scientist)} of "
            f"{sum(len(run.scientist) for run in runs)} ideas passed its novelty check",
            "writer": writer,
            "scipip_ideas": dg.MetadataValue.md(markdown_table(preview, ["title", "inspired_by"])),
            **skipped_metadata(skipped_routes(library)),
            **llm_metadata(client),
        }
    )


# -- scores ----------------------------------------------------------------------------------------


class SciPIPScoresConfig(JudgeCallConfig):
    """Table 1's ratings of the short and the expanded ideas, and Fig. 4's pairwise judgements, by
    one or more judges (each may be another model); the seed of the shown order."""

    TASKS = scipip.JUDGE_TASKS

    seed: int = Field(default=13, description="Seed of the order ideas are shown to the judge in.")
    judges: list[JudgeModel] = Field(
        default=[],
        description="Judges to run (agreement is reported between them); empty: one, from judge_provider/judge_model.",
    )
    expanded_per_call: int = Field(
        default=5, ge=1, description="Expanded ideas shown to the judge per call (they are long)."
    )
    pairwise: bool = Field(default=True, description="Judge SciPIP against each baseline pairwise (Fig. 4).")

    def judge_with(self, client: LLMClient, sets: stages.IdeaSets, judge: str) -> stages.Judged:
        return stages.judge(
            client,
            sets,
            judge,
            seed=self.seed,
            expanded_per_call=self.expanded_per_call,
            pairwise=self.pairwise,
        )

    def stage(self, scope: CollectionScope) -> list[stages.Judged]:
        """The dry run's stage: every judge's calls, priced on the scope's one client (the asset
        gives each judge a client of its own)."""
        sets = stages.idea_sets(scope)
        judges = self.judges or [JudgeModel(name="judge")]
        return [self.judge_with(scope.client, sets, judge.name) for judge in judges]


@dg.asset(
    kinds={"duckdb"},
    deps=[scipip_ideas, scipip_retrievals],
    code_version="2",
    **pooled(LLM_POOL),
    **SCIPIP_GROUP,
)
def scipip_scores(
    context: dg.AssetExecutionContext, config: SciPIPScoresConfig, storage: StorageResource, llm: LLMResource
) -> dg.MaterializeResult:
    """Every method's ideas judged as the paper's raters judged them, expanded (problem, method,
    expected outcome) and, as a second table, short: novelty, clarity, feasibility, relevance 0-5
    and helpfulness, each method's share rated >= 4; SciPIP's pairwise win rates against each
    baseline (both orders, ties allowed); each judge and their agreement; leave-one-out recall; a
    chart and data/reports/<collection>/scipip_report.md."""
    return materialize_each(
        context, storage, lambda collection: _scores(context, config, storage, llm, collection)
    )


def _scores(context, config, storage, llm, collection) -> CollectionReport:
    warehouse = storage.warehouse
    ideas, runs = scipip.store.load_ideas(warehouse, collection)
    if not ideas:
        raise nothing_to_do(collection, "no ideas to judge: `scipip_ideas` stored none.")
    sets = stages.idea_sets_of(ideas, runs, store.paper_texts(warehouse, collection))
    judged, pairs, calls, names = _judge(context, config, storage, llm, collection, sets)
    warehouse.replace_partition(
        collection,
        {
            "scipip_scores": pa.Table.from_pylist([{"collection": collection, **j.__dict__} for j in judged]),
            "scipip_pairs": pa.Table.from_pylist([{"collection": collection, **p.__dict__} for p in pairs]),
        },
    )
    recall = scipip.recall_table(store.load_recall(warehouse, collection))
    expanded_shares = scipip.good_shares([j for j in judged if j.form == EXPANDED])
    short_shares = scipip.good_shares([j for j in judged if j.form == SHORT])
    wins = scipip.win_rates(pairs)
    settings = scipip.store.load_settings(warehouse, collection)
    first_run = next(iter(runs.values()))
    judge = ", ".join(names)
    by_model = not all(name.startswith("offline") for name in names)
    notes = _score_notes(storage, collection, names, judged, pairs, runs)
    example = {
        "background": first_run["background"],
        "ideas": [
            {"title": r["title"], "text": r["detailed_method"] or r["idea"], "inspired_by": r["inspired_by"]}
            for r in ideas
            if r["query_id"] == first_run["query_id"] and r["method"] == scipip.schemas.DUAL
        ],
    }
    tables = report.ReportTables(
        recall,
        expanded_shares,
        short_shares,
        wins,
        scipip.judge_agreement(judged),
        settings[0] if settings else None,
        _merged(warehouse, collection),
    )
    written = write_report(
        storage,
        collection,
        "scipip_report.md",
        report.render_report(collection, tables, judge, notes, example, by_model=by_model),
        report.CHART_FILE,
        report.render_chart(recall, expanded_shares, wins, by_model=by_model),
        "recall, expanded idea ratings and win rates",
        _headline(storage, collection, tables, judge, by_model, [*notes, *_retrieval_note(settings)]),
    )
    summary = RunSummary.from_rows(", ".join(sorted({row.provider for row in calls})) or "none", calls)
    return CollectionReport(
        metadata={
            "dagster/row_count": len(judged),
            "judge": judge,
            **_score_tables(tables),
            **written,
            **summary.as_metadata(),
        }
    )


def _judge(context, config, storage, llm, collection, sets: stages.IdeaSets):
    """Each judge's ratings of the short and expanded ideas and, with ``pairwise``, its preferences;
    the calls made and the judges' names."""
    judges = config.judges or [JudgeModel(name="", **_single_judge(config))]
    judged, pairs, calls, names = [], [], [], []
    for judge in judges:
        scope = collection_scope(context, storage, llm, config, collection, model_choice=judge.choice())
        name = judge.name or scope.client.writer_label(scipip.tasks.SCIPIP_JUDGE_IDEAS)
        names.append(name)
        with model_errors_as_failures(scope.client, collection):
            made = config.judge_with(scope.client, sets, name)
        judged += made.ratings
        pairs += made.pairs
        calls += scope.client.rows
    return judged, pairs, calls, names


def _score_notes(storage, collection, names, judged, pairs, runs) -> list[str]:
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
            [standin_note({"idea writer": writers(storage, "scipip_ideas", collection), "judge": judge})],
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
    tau_sweep = scipip.store.filter_merges(warehouse, collection, scipip.schemas.SKC_FILTERED)
    if not tau_sweep:
        return "no leave-one-out query"
    return (
        f"{sum(r['merged'] or 0 for r in tau_sweep)} papers merged into another's cluster over "
        f"{len(tau_sweep)} leave-one-out queries"
    )


def _headline(storage, collection, tables, judge: str, by_model: bool, notes: list[str]) -> Headline:
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
        writer=writers(storage, "scipip_ideas", collection),
        judge=judge,
    )


def _score_tables(tables) -> dict:
    """The report's tables as the step's metadata."""
    return {
        "expanded_rated_4_or_more": dg.MetadataValue.md(
            markdown_table(tables.expanded, report.SHARE_COLUMNS)
        ),
        "short_rated_4_or_more": dg.MetadataValue.md(markdown_table(tables.short, report.SHARE_COLUMNS)),
        "win_rates": dg.MetadataValue.md(
            markdown_table(tables.wins, report.WIN_COLUMNS, empty="No pairs judged.")
        ),
        "judge_agreement": dg.MetadataValue.md(
            markdown_table(
                tables.agreement,
                report.AGREEMENT_COLUMNS,
                empty="One judge: configure two or more `judges` to measure agreement.",
            )
        ),
        "recall": dg.MetadataValue.md(markdown_table(tables.recall, report.RECALL_COLUMNS)),
    }


def _novelty_counts(runs) -> str:
    checks = [check for run in runs for check in run["scientist_checks"] or []]
    novel = sum(": novel." in check for check in checks)
    return f"Its novelty check kept {novel} of {len(checks)} ideas."


def _single_judge(config: SciPIPScoresConfig) -> dict:
    return {
        "provider": config.judge_provider,
        "model": config.judge_model,
        "base_url": config.judge_base_url,
        "api_key_env": config.judge_api_key_env,
    }
