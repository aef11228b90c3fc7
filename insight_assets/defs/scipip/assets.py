"""SciPIP's assets: the collection as a literature database (each paper summarized, its background
and summary embedded), the paper-keyword graph, SKC retrievals for the user's research backgrounds
and, as leave-one-out examples, for every paper's own background, with their recall; ideas by the
dual path, each path alone and a direct prompt; and their scores with the report."""

import base64
import dataclasses
import statistics
from pathlib import Path

import dagster as dg
import numpy as np
import pyarrow as pa
from pydantic import Field

from insight_assets.core.embedding import one_torch_thread
from insight_assets.core.methods import scipip
from insight_assets.core.methods.scipip import report, stages, store
from insight_assets.core.methods.scipip.evaluation import RECALL_AT, skipped_routes, why_no_recall
from insight_assets.core.methods.scipip.schemas import SKC_FILTERED
from insight_assets.core.stage import CollectionScope
from insight_assets.core.vectors import normalize_rows
from insight_assets.defs.citations.assets import citations
from insight_assets.defs.ingestion.assets import parsed_documents
from insight_assets.defs.metadata import (
    CollectionReport,
    config_settings,
    items_check,
    markdown_table,
    materialize_each,
    nothing_to_do,
    skipped_metadata,
)
from insight_assets.defs.model_calls import (
    ModelCallConfig,
    collection_scope,
    llm_metadata,
    run_stage,
)
from insight_assets.defs.partitions import asset_settings, existing_collection_folder
from insight_assets.defs.pools import LLM_POOL, pooled
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource

SCIPIP_GROUP = asset_settings("scipip")
# tau was tuned for the paper's embedder (jina-embeddings-v3); the report shows what it does on ours.
TAU_SWEEP = (0.5, 0.6, 0.7, 0.8, 0.9)


# -- paper summaries -------------------------------------------------------------------------------


class SciPIPSummariesConfig(ModelCallConfig):
    """§3.1, Tables 5-7: each paper's summary, background, ideas, keywords and concise method."""

    TASKS = scipip.SUMMARY_TASKS

    def stage(self, scope: CollectionScope) -> stages.Summarized:
        return stages.summaries(scope)


@dg.asset(
    kinds={"duckdb", "lancedb"},
    deps=[parsed_documents, citations],
    code_version="1",
    **pooled(LLM_POOL),
    **SCIPIP_GROUP,
)
def paper_summaries(
    context: dg.AssetExecutionContext,
    config: SciPIPSummariesConfig,
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
) -> dg.MaterializeResult:
    """Every paper as SciPIP's literature database holds it: keywords (at most 5 noun phrases), a
    one-sentence summary, a background (two motivations), ideas (three details), a concise method
    and its references in the collection; the background and summary embedded into LanceDB.
    Offline: extractive sentences and key phrases, labelled."""
    return materialize_each(
        context,
        storage,
        lambda collection: _summaries(context, config, storage, llm, embedder, collection),
        outputs_present=store.summary_vectors(storage.vectors_uri).exists,
    )


def _summaries(context, config, storage, llm, embedder, collection) -> CollectionReport:
    scope = collection_scope(context, storage, llm, config, collection, embedder)
    summarized, client, warehouse = run_stage(config, scope), scope.client, scope.warehouse
    parts, summaries = summarized.parts, summarized.summaries
    usable = [s for s in summaries if s.status == "ok"]
    model = embedder.get_embedder()
    with one_torch_thread():
        vectors = normalize_rows(model.embed([s.background for s in usable] + [s.summary for s in usable]))
    store.summary_vectors(storage.vectors_uri).replace(
        collection, store.summary_vector_table(collection, usable, vectors, model.variant)
    )
    writer = client.writer_label(scipip.tasks.SCIPIP_DIGEST)
    warehouse.replace_partition(
        collection, {"scipip_papers": store.papers_table(collection, summaries, parts, writer)}
    )
    failed = [s for s in summaries if s.status != "ok"]
    sample = [
        {"title": s.title[:60], "keywords": "; ".join(s.keywords), "summary": s.summary[:200]}
        for s in usable[:8]
    ]
    return CollectionReport(
        metadata={
            "dagster/row_count": len(usable),
            "papers_failed": len(failed),
            "failures": "; ".join(f"{s.title[:40]}: {s.error}" for s in failed[:5]) or "none",
            "without_introduction_heading": sum(p.introduction_span is None for p in parts),
            "without_method_heading": sum(p.method_span is None for p in parts),
            "writer": writer,
            "sample": dg.MetadataValue.md(markdown_table(sample, ["title", "keywords", "summary"])),
            **llm_metadata(client),
        }
    )


# -- keyword graph ---------------------------------------------------------------------------------


@dg.asset(kinds={"duckdb"}, deps=[paper_summaries], code_version="1", **SCIPIP_GROUP)
def keyword_graph(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
    """The paper-keyword graph (§3.1, Figure 1): an edge from each paper to each of its keywords,
    and keyword co-occurrence (papers holding both), with a picture."""
    return materialize_each(context, storage, lambda collection: _keyword_graph(storage, collection))


def _keyword_graph(storage, collection) -> CollectionReport:
    warehouse = storage.warehouse
    graph = scipip.KeywordGraph.build(scipip.store.paper_keywords(warehouse, collection))
    edges = [(doc, keyword) for doc, keywords in graph.papers.items() for keyword in keywords]
    if not edges:
        raise nothing_to_do(collection, "no paper summary has keywords to link.")
    pairs = graph.co_occurrences()
    warehouse.replace_partition(
        collection,
        {
            "scipip_keyword_edges": pa.Table.from_pylist(
                [{"collection": collection, "doc_id": doc, "keyword": keyword} for doc, keyword in edges]
            ),
            "scipip_keyword_pairs": pa.Table.from_pylist(
                [
                    {"collection": collection, "keyword_a": a, "keyword_b": b, "papers": count}
                    for (a, b), count in sorted(pairs.items())
                ]
            ),
        },
    )
    shared = sorted(graph.holders, key=lambda k: (-len(graph.holders[k]), k))[:15]
    picture = report.keyword_graph_png(graph)
    report_dir = Path(storage.reports_dir) / collection
    report_dir.mkdir(parents=True, exist_ok=True)
    picture_path = report_dir / "scipip_keyword_graph.png"
    picture_path.write_bytes(picture)
    return CollectionReport(
        metadata={
            "dagster/row_count": len(edges),
            "papers": len(graph.papers),
            "keywords": len(graph.holders),
            "keywords_in_two_or_more_papers": sum(len(docs) >= 2 for docs in graph.holders.values()),
            "co_occurring_pairs": len(pairs),
            "most_shared": dg.MetadataValue.md(
                markdown_table(
                    [{"keyword": k, "papers": len(graph.holders[k])} for k in shared], ["keyword", "papers"]
                )
            ),
            "graph": dg.MetadataValue.md(
                f"![keyword graph](data:image/png;base64,{base64.b64encode(picture).decode('ascii')})"
            ),
            "graph_file": dg.MetadataValue.path(str(picture_path.resolve())),
        }
    )


# -- retrievals ------------------------------------------------------------------------------------


class SciPIPRetrievalConfig(ModelCallConfig):
    """§3.2 and §4.1's values. Unset, tau is calibrated to the embedder (the paper's 0.8 is for
    jina-embeddings-v3) and the keyword filter's m and n (which the paper does not give) come from
    the collection's keyword statistics."""

    TASKS = (scipip.SCIPIP_ENTITIES,)

    top_k: int = Field(default=scipip.schemas.TOP_K, ge=1, description="Semantic hits (TopK).")
    n_cocite: int = Field(
        default=scipip.schemas.N_COCITE, ge=0, description="Co-cited papers per paper (nCOCITE)."
    )
    tau: float | None = Field(
        default=None,
        description=(
            "Summary cosine that merges two papers' clusters; unset: calibrated to the embedder "
            "(set 0.8 for the paper's value on jina-embeddings-v3)."
        ),
    )
    n_papers: int = Field(
        default=scipip.schemas.N_PAPERS, ge=1, description="Papers kept after the filter (nPapers)."
    )
    neighbour_min_papers: int | None = Field(
        default=None,
        ge=1,
        description="Papers a neighbour keyword must share (m); unset: from the collection.",
    )
    neighbour_keep: int | None = Field(
        default=None, ge=0, description="Rarest neighbour keywords kept (n); unset: from the collection."
    )
    leave_one_out: bool = Field(
        default=True, description="Also query with every paper's own background, the paper held out."
    )

    def settings(self) -> scipip.SciPIPSettings:
        return config_settings(self, scipip.SciPIPSettings, "scipip_retrievals")

    def stage(self, scope: CollectionScope) -> stages.Queried:
        return stages.retrievals(scope, self.leave_one_out)


@dg.asset(
    kinds={"duckdb"},
    deps=[keyword_graph],
    code_version="1",
    **pooled(LLM_POOL),
    check_specs=[
        dg.AssetCheckSpec(
            "backgrounds_readable",
            asset="scipip_retrievals",
            description="Every line of the collection's backgrounds.jsonl is usable.",
        ),
        dg.AssetCheckSpec(
            "retrievals_made",
            asset="scipip_retrievals",
            description="Some background (the user's, or a held-out paper's) was retrieved for.",
        ),
    ],
    **SCIPIP_GROUP,
)
def scipip_retrievals(
    context: dg.AssetExecutionContext,
    config: SciPIPRetrievalConfig,
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
) -> dg.MaterializeResult:
    """SKC retrieval (semantic, keyword, co-citation; then the clustering filter) for each research
    background in the collection's backgrounds.jsonl and, held out in turn, for every paper's own
    background; each retrieved paper with the routes that found it. The leave-one-out queries are
    scored: recall@10 of the held-out paper's in-collection references, per retrieval variant."""
    settings = config.settings()
    return materialize_each(
        context,
        storage,
        lambda collection: _retrievals(context, config, settings, storage, llm, embedder, collection),
    )


def _tau_row(tau: float, rows: list[scipip.RecallRow]) -> dict:
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


def _retrievals(context, config, settings, storage, llm, embedder, collection) -> CollectionReport:
    existing_collection_folder(storage.collections_root, collection)
    scope = collection_scope(context, storage, llm, config, collection, embedder)
    queried, client, model = run_stage(config, scope), scope.client, scope.embedder
    library, problems, queries = queried.library, queried.problems, queried.queries
    settings = settings.for_library(library)
    given = [b for b in queried.backgrounds if b.held_out is None]
    references = library.references()
    held_out = [q for q in queries if q.held_out]
    recall = scipip.leave_one_out(library, held_out, references, settings)
    user_rows = []
    for query in (q for q in queries if q.held_out is None):
        found = scipip.retrieve(library, query.vector, query.entities, settings)
        user_rows += report.retrieval_rows(collection, query, found)
    used = report.settings_row(collection, config, settings, library, model.variant)
    storage.warehouse.replace_partition(
        collection, store.retrieval_tables(collection, queries, user_rows, recall, used)
    )
    sweep = _tau_sweep(library, held_out, references, settings, recall)
    skipped = skipped_routes(library)
    if not recall:
        skipped["leave-one-out recall"] = why_no_recall(library, config.leave_one_out)
    return CollectionReport(
        metadata={
            "dagster/row_count": len(user_rows) + len(recall),
            "user_backgrounds": len(given),
            "leave_one_out_queries": len({r.query_id for r in recall}),
            "recall": dg.MetadataValue.md(markdown_table(scipip.recall_table(recall), report.RECALL_COLUMNS)),
            "tau_sweep": dg.MetadataValue.md(markdown_table(sweep, report.TAU_COLUMNS)),
            "tau": used["tau_source"],
            "keyword_threshold": used["keyword_source"],
            "keyword_filter": used["keyword_filter"],
            "summary_similarity": _summary_similarity(library, settings.tau),
            **skipped_metadata(skipped),
            **llm_metadata(client),
        },
        checks=[
            items_check(
                "retrievals_made",
                len(user_rows) + len(recall),
                f"no user background ({scipip.BACKGROUNDS_FILE}) and no leave-one-out query: "
                + skipped.get("leave-one-out recall", ""),
            ),
            _backgrounds_readable(problems),
        ],
    )


def _tau_sweep(library, held_out, references, settings, recall) -> list[dict]:
    """Leave-one-out recall at each tau of ``TAU_SWEEP`` and the one used (whose ``recall`` is known)."""
    return [
        _tau_row(
            tau,
            recall
            if tau == settings.tau
            else scipip.leave_one_out(library, held_out, references, dataclasses.replace(settings, tau=tau)),
        )
        for tau in sorted({*TAU_SWEEP, settings.tau})
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


def _backgrounds_readable(problems) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        check_name="backgrounds_readable",
        passed=not [p for p in problems if "will be extracted" not in p.message],
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "problems": dg.MetadataValue.md(
                markdown_table([p.__dict__ for p in problems], ["line", "message"], empty="None.")
            )
        },
    )
