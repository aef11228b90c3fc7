"""SciPIP's idea assets: the dual path's ideas for each background (and its baselines), their scores and the report."""

import dagster as dg
import pyarrow as pa
from pydantic import Field

from insight_assets.core.headlines import Headline, headline_table
from insight_assets.core.methods import scipip
from insight_assets.core.methods.scipip import report, store
from insight_assets.core.methods.scipip.evaluation import skipped_routes
from insight_assets.defs.metadata import (
    CollectionReport,
    index_required,
    markdown_table,
    materialize_each,
    nothing_to_do,
    skipped_metadata,
    write_report,
    writers,
)
from insight_assets.defs.model_calls import (
    LLM_POOL,
    JudgeCallConfig,
    llm_metadata,
    model_client,
    model_errors_as_failures,
)
from insight_assets.defs.partitions import existing_collection_folder
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


@dg.asset(kinds={"duckdb"}, deps=[scipip_retrievals], code_version="1", pool=LLM_POOL, **SCIPIP_GROUP)
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
    settings = config.settings()
    return materialize_each(
        context,
        storage,
        lambda collection: _ideas(context, config, settings, storage, llm, embedder, collection),
    )


def _ideas(context, config, settings, storage, llm, embedder, collection) -> CollectionReport:
    warehouse = storage.warehouse
    with index_required(collection):
        library = store.load_library(warehouse, storage.lancedb_uri, embedder.get_embedder(), collection)
    folder = existing_collection_folder(storage.collections_root, collection)
    found, _ = scipip.research_backgrounds(folder, library.backgrounds, config.leave_one_out)
    backgrounds = found[: config.max_backgrounds]
    if not backgrounds:
        raise nothing_to_do(
            collection, f"no research background: {scipip.BACKGROUNDS_FILE} is empty or absent."
        )
    papers = {
        row["doc_id"]: scipip.Paper(row["title"], row["method"])
        for row in warehouse.rows(
            "SELECT doc_id, title, method FROM scipip_papers WHERE collection = ? AND status = 'ok'",
            [collection],
        )
    }
    client = model_client(context, llm, config, collection)
    with model_errors_as_failures(client, collection):
        queries = scipip.make_queries(client, embedder.get_embedder().embed, backgrounds)
        runs = scipip.propose_ideas(client, library, papers, queries, settings)
    writer = client.writer_label(scipip.tasks.SCIPIP_IDEAS)
    idea_rows = [
        {
            "collection": collection,
            "query_id": run.query.query_id,
            "method": method,
            "position": position,
            "title": idea.title,
            "idea": idea.idea,
            "inspired_by": list(idea.inspired_by),
            **_expansion(run, method, position),
            "writer": writer,
        }
        for run in runs
        for method in scipip.schemas.IDEA_METHODS
        for position, idea in enumerate(run.ideas(method))
    ]
    run_rows = [
        {
            "collection": collection,
            "query_id": run.query.query_id,
            "background": run.query.background,
            "held_out": run.query.held_out,
            "transformed": run.transformed,
            "entities": list(run.query.entities),
            "brainstorm_keywords": list(run.brainstorm_keywords),
            "retrieved_doc_ids": list(run.retrieval.selected),
            "inspiring_doc_ids": [i["doc_id"] for i in run.inspirations],
            "errors": run.errors,
        }
        for run in runs
    ]
    if not idea_rows:
        raise nothing_to_do(collection, f"no idea was proposed: {'; '.join(runs[0].errors[:3])}")
    warehouse.replace_partition(
        collection,
        {"scipip_idea_runs": pa.Table.from_pylist(run_rows), "scipip_ideas": pa.Table.from_pylist(idea_rows)},
    )
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
            "writer": writer,
            "scipip_ideas": dg.MetadataValue.md(markdown_table(preview, ["title", "inspired_by"])),
            **skipped_metadata(skipped_routes(library)),
            **llm_metadata(client),
        }
    )


def _expansion(run: scipip.IdeaRun, method: str, position: int) -> dict:
    detailed = (
        run.expanded[position] if method == scipip.schemas.DUAL and position < len(run.expanded) else None
    )
    return {
        "problem": detailed.problem if detailed else None,
        "detailed_method": detailed.method if detailed else None,
        "expected_outcome": detailed.expected_outcome if detailed else None,
    }


# -- scores ----------------------------------------------------------------------------------------


class SciPIPScoresConfig(JudgeCallConfig):
    """Table 1's ratings by a judge that may be another model; the seed of the shown order."""

    TASKS = scipip.JUDGE_TASKS

    seed: int = Field(default=13, description="Seed of the order ideas are shown to the judge in.")


@dg.asset(
    kinds={"duckdb"}, deps=[scipip_ideas, scipip_retrievals], code_version="1", pool=LLM_POOL, **SCIPIP_GROUP
)
def scipip_scores(
    context: dg.AssetExecutionContext, config: SciPIPScoresConfig, storage: StorageResource, llm: LLMResource
) -> dg.MaterializeResult:
    """Leave-one-out retrieval recall per variant, and every idea judged (novelty, clarity,
    feasibility, relevance 0-5, helpfulness) with each method's share rated >= 4; a table, a chart
    and data/reports/<collection>/scipip_report.md."""
    return materialize_each(
        context, storage, lambda collection: _scores(context, config, storage, llm, collection)
    )


def _scores(context, config, storage, llm, collection) -> CollectionReport:
    warehouse = storage.warehouse
    ideas = warehouse.rows(
        "SELECT * FROM scipip_ideas WHERE collection = ? ORDER BY query_id, method, position", [collection]
    )
    if not ideas:
        raise nothing_to_do(collection, "no ideas to judge: `scipip_ideas` stored none.")
    runs = {
        row["query_id"]: row
        for row in warehouse.rows("SELECT * FROM scipip_idea_runs WHERE collection = ?", [collection])
    }
    summaries = {
        row["doc_id"]: f"{row['summary']} {row['method']}"
        for row in warehouse.rows(
            "SELECT doc_id, summary, method FROM scipip_papers WHERE collection = ?", [collection]
        )
    }
    sets = []
    for query_id, run in runs.items():
        by_method: dict[str, list] = {}
        for row in (r for r in ideas if r["query_id"] == query_id):
            by_method.setdefault(row["method"], []).append(
                scipip.schemas.Idea(title=row["title"], idea=row["idea"], inspired_by=row["inspired_by"])
            )
        context_texts = [summaries[doc] for doc in run["retrieved_doc_ids"] if doc in summaries]
        sets.append(scipip.IdeaSet(query_id, run["background"], by_method, context_texts))
    client = model_client(context, llm, config, collection, model_choice=config.judge_choice())
    with model_errors_as_failures(client, collection):
        judged = scipip.judge_ideas(client, sets, config.seed)
    judge = client.writer_label(scipip.tasks.SCIPIP_JUDGE_IDEAS)
    warehouse.replace_partition(
        collection,
        {
            "scipip_scores": pa.Table.from_pylist(
                [{"collection": collection, **j.__dict__, "judge": judge} for j in judged]
            )
        },
    )
    recall = scipip.recall_table(store.load_recall(warehouse, collection))
    shares = scipip.good_shares(judged)
    notes = [
        f"Judge: {judge}."
        + (
            " Offline, the ratings are TF-IDF stand-ins, not judgements."
            if judge.startswith("offline")
            else ""
        ),
        "Offline ideas are template recombinations of the background and the retrieved methods, marked as such.",
        f"{sum(j.error is not None for j in judged)} ideas could not be rated.",
    ]
    example_run = next(iter(runs.values()))
    example = {
        "background": example_run["background"],
        "ideas": [
            {"title": r["title"], "text": r["detailed_method"] or r["idea"], "inspired_by": r["inspired_by"]}
            for r in ideas
            if r["query_id"] == example_run["query_id"] and r["method"] == scipip.schemas.DUAL
        ],
    }
    written = write_report(
        storage,
        collection,
        "scipip_report.md",
        report.render_report(collection, recall, shares, judge, notes, example),
        report.CHART_FILE,
        report.render_chart(recall, shares),
        "recall and idea ratings",
        Headline(
            tables=(
                headline_table("Ideas rated 4 or more, per method", shares, report.SHARE_COLUMNS),
                headline_table("Recall of the held-out paper's references", recall, report.RECALL_COLUMNS),
            ),
            notes=tuple(notes),
            writer=writers(storage, "scipip_ideas", collection),
            judge=judge,
        ),
    )
    return CollectionReport(
        metadata={
            "dagster/row_count": len(judged),
            "judge": judge,
            "shares_rated_4_or_more": dg.MetadataValue.md(markdown_table(shares, report.SHARE_COLUMNS)),
            "recall": dg.MetadataValue.md(markdown_table(recall, report.RECALL_COLUMNS)),
            **written,
            **llm_metadata(client),
        }
    )
