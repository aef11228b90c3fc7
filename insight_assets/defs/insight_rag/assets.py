"""Insight-RAG's assets: the collection's knowledge triples (and its searchable triples and
sentences), the benchmark built from them and the citation graph, the answers of Insight-RAG and
its baselines, and their scores with the report."""

import dagster as dg
from pydantic import Field

from insight_assets.core.citations import citation_links
from insight_assets.core.embedding import one_torch_thread
from insight_assets.core.methods import insight_rag
from insight_assets.core.methods.insight_rag import retriever, stages, store
from insight_assets.core.methods.insight_rag.benchmark import why_no_matching
from insight_assets.core.methods.insight_rag.collection import (
    ChunkTriples,
)
from insight_assets.core.methods.insight_rag.tasks import (
    BENCHMARK_TASKS,
    INSIGHT_RAG_QUESTION,
    INSIGHT_RAG_TRIPLES,
    TRIPLE_TASKS,
)
from insight_assets.core.stage import CollectionScope
from insight_assets.defs.citations.assets import citations
from insight_assets.defs.ingestion.embeddings import chunk_embeddings
from insight_assets.defs.metadata import (
    CollectionReport,
    config_settings,
    items_check,
    markdown_table,
    materialize_each,
    skipped_metadata,
)
from insight_assets.defs.model_calls import (
    ModelCallConfig,
    collection_scope,
    llm_metadata,
    run_stage,
)
from insight_assets.defs.partitions import asset_settings
from insight_assets.defs.pools import LLM_POOL, pooled
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource

INSIGHT_RAG_GROUP = asset_settings("insight_rag")


# -- triples ---------------------------------------------------------------------------------------


class InsightRAGTriplesConfig(ModelCallConfig):
    """§3, Figure 2 step 1: triples of every ``xsum`` chunk's whole sentences."""

    TASKS = TRIPLE_TASKS
    max_chunks_per_paper: int | None = Field(
        default=None,
        ge=1,
        description="Read triples from at most this many chunks of each paper, from its start (one "
        "model call a chunk); unset: every chunk, as the paper does.",
    )

    def stage(self, scope: CollectionScope) -> ChunkTriples:
        return stages.triples(scope, self.max_chunks_per_paper)


@dg.asset(
    kinds={"duckdb", "lancedb"},
    deps=[chunk_embeddings],
    code_version="2",
    **pooled(LLM_POOL),
    check_specs=[
        dg.AssetCheckSpec(
            "triples_found",
            asset="knowledge_triples",
            description="The extractor found some triple; without one only the sentences are indexed.",
        )
    ],
    **INSIGHT_RAG_GROUP,
)
def knowledge_triples(
    context: dg.AssetExecutionContext,
    config: InsightRAGTriplesConfig,
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
) -> dg.MaterializeResult:
    """(subject, relation, object) triples of every ``xsum`` chunk, each with its chunk and sentence,
    normalised (case, whitespace, lemmatised relation) and deduplicated per paper; offline by a
    rule-based extractor. The triples and the collection's sentences are embedded into LanceDB
    (their own table) for the insight retriever."""
    return materialize_each(
        context,
        storage,
        lambda collection: _triples(context, config, storage, llm, embedder, collection),
        outputs_present=store.unit_vectors(storage.vectors_uri).exists,
    )


def _triples(context, config, storage, llm, embedder, collection) -> CollectionReport:
    scope = collection_scope(context, storage, llm, config, collection, embedder)
    read, client, warehouse = run_stage(config, scope), scope.client, scope.warehouse
    # No triple (a small model whose every reply failed its checks, say): the sentences are still
    # indexed, for the sentences mode and the matching items; the warning check says why.
    triples, sentences = read.triples, read.sentences
    writer = client.writer_label(INSIGHT_RAG_TRIPLES)
    extractor = insight_rag.EXTRACTOR if writer.startswith("offline") else writer
    model = embedder.get_embedder()
    units = store.unit_vectors(storage.vectors_uri)
    # Only the triples and sentences that have no vector yet are embedded (one new paper: its own).
    with one_torch_thread():
        vectors, embedded = retriever.index_vectors(
            units.read(collection), model.variant, triples, sentences, model.embed
        )
    units.replace(collection, retriever.index_table(collection, model.variant, triples, sentences, vectors))
    units.build_text_index(collection)
    warehouse.replace_partition(collection, store.triple_tables(collection, triples, sentences, extractor))
    sample = [
        {"subject": t.subject, "relation": t.relation, "object": t.object, "sentence": t.sentence[:160]}
        for t in triples[:: max(1, len(triples) // 15)][:15]
    ]
    return CollectionReport(
        metadata={
            "dagster/row_count": len(triples),
            "sentences": len(sentences),
            "chunks_read": read.chunks_read,
            "chunks_failed": len(read.failed),
            "texts_embedded": embedded,
            "texts_reused": len(vectors) - embedded,
            "failures": "; ".join(sorted({item.error or item.status for item in read.failed})[:5]) or "none",
            "extractor": extractor,
            "sample": dg.MetadataValue.md(
                markdown_table(sample, ["subject", "relation", "object", "sentence"])
            ),
            **llm_metadata(client),
        },
        checks=[
            items_check(
                "triples_found",
                len(triples),
                f"the extractor found no triple in the {len(sentences)} sentences of {read.chunks_read} "
                "chunks it read (see failures); only the sentences are indexed.",
            )
        ],
    )


# -- benchmark ---------------------------------------------------------------------------------


class InsightRAGBenchmarkConfig(ModelCallConfig):
    """§3's rules; the issue's sizes (up to 200 buried, 100 multi-document, 100 matching)."""

    TASKS = BENCHMARK_TASKS

    max_buried: int = Field(
        default=insight_rag.schemas.MAX_BURIED, ge=0, description="Buried questions, at most."
    )
    max_multi: int = Field(
        default=insight_rag.schemas.MAX_MULTI, ge=0, description="Multi-document questions."
    )
    max_matching: int = Field(
        default=insight_rag.schemas.MAX_MATCHING, ge=0, description="Matching pairs (1:1)."
    )
    seed: int = Field(default=insight_rag.schemas.SEED, description="Sampling seed.")
    vague_share: float = Field(
        default=insight_rag.schemas.VAGUE_DOCUMENT_SHARE,
        description="A subject whose every word is in this share of the papers is too vague to ask about.",
    )

    def settings(self) -> insight_rag.BenchmarkSettings:
        return config_settings(self, insight_rag.BenchmarkSettings, "insight_rag_benchmark")

    def stage(self, scope: CollectionScope) -> stages.Benchmarked:
        return stages.benchmark(scope, self.settings())


@dg.asset(
    kinds={"duckdb"},
    deps=[knowledge_triples, citations],
    code_version="1",
    **pooled(LLM_POOL),
    check_specs=[
        dg.AssetCheckSpec(
            "benchmark_has_items",
            asset="insight_rag_benchmark",
            description="Some triple became a question, or some citation pair a matching item.",
        )
    ],
    **INSIGHT_RAG_GROUP,
)
def insight_rag_benchmark(
    context: dg.AssetExecutionContext,
    config: InsightRAGBenchmarkConfig,
    storage: StorageResource,
    llm: LLMResource,
) -> dg.MaterializeResult:
    """Deeply buried and multi-document questions from the collection's triples (phrased by a task
    asking about the object; offline: templates) and citation-recommendation pairs from its
    citation graph, with gold answers and documents. Every triple's fate is kept: the item it became
    or why it was dropped."""
    settings = config.settings()
    return materialize_each(
        context, storage, lambda collection: _benchmark(context, config, settings, storage, llm, collection)
    )


def _benchmark(context, config, settings, storage, llm, collection) -> CollectionReport:
    scope = collection_scope(context, storage, llm, config, collection)
    benchmarked, client, warehouse = run_stage(config, scope), scope.client, scope.warehouse
    benchmark, items = benchmarked.benchmark, benchmarked.items
    why_none = (
        f"no benchmark item: every triple was dropped ({benchmark.dropped_reasons()}) and matching needs "
        "a pair of papers that cite each other and a pair that do not."
    )
    writer = client.writer_label(INSIGHT_RAG_QUESTION)
    warehouse.replace_partition(
        collection, store.benchmark_tables(collection, items, benchmark.fates, writer)
    )
    counts = {kind: sum(item.kind == kind for item in items) for kind in insight_rag.schemas.KINDS}
    skipped = {}
    if not counts[insight_rag.schemas.MATCHING]:
        skipped["matching items"] = why_no_matching(
            citation_links(warehouse, collection), settings.max_matching
        )
    sample = [
        {
            "kind": item.kind,
            "question": item.question or f"{item.paper_a[:8]} vs {item.paper_b[:8]}",
            "gold": "; ".join(item.gold_answers),
        }
        for kind in insight_rag.schemas.KINDS
        for item in [i for i in items if i.kind == kind][:4]
    ]
    return CollectionReport(
        metadata={
            "dagster/row_count": len(items),
            "items": dg.MetadataValue.json(counts),
            "dropped_triples": dg.MetadataValue.json(benchmark.dropped_reasons()),
            "sample": dg.MetadataValue.md(markdown_table(sample, ["kind", "question", "gold"])),
            "rules": "buried: one object in the collection, subject and object once in the paper's full text "
            "(the paper: once in the abstract)",
            "writer": writer,
            **skipped_metadata(skipped),
            **llm_metadata(client),
        },
        checks=[items_check("benchmark_has_items", len(items), why_none)],
    )
