"""The theme graph asset: InsightGen's thematic map of a collection (§4.1, Appendix B)."""

import base64
import dataclasses
import time
from pathlib import Path

import dagster as dg

from insight_assets.core.methods import insightgen
from insight_assets.core.page.graph_plot import render_theme_graph_png
from insight_assets.core.retrieval.index import IndexMissing, load_index
from insight_assets.core.storage import kept_builds
from insight_assets.core.themes import graph_archive
from insight_assets.core.themes.clustering import (
    ThemeGraph,
    ThemeGraphSettings,
    build_theme_graph,
)
from insight_assets.defs.ingestion.embeddings import chunk_embeddings
from insight_assets.defs.materialization import CollectionReport, materialize_each
from insight_assets.defs.metadata import markdown_table, nothing_to_do
from insight_assets.defs.partitions import asset_settings
from insight_assets.defs.pools import EMBEDDING_POOL, pooled
from insight_assets.defs.resources import EmbedderResource, StorageResource
from insight_assets.defs.stage_assets import dagster_config, settings_of

# The theme graph's settings (``core/themes/clustering.py``): the paper's system and its ablations.
InsightGenThemeGraphConfig = dagster_config(ThemeGraphSettings)
CODE_VERSION = "2"


@dg.asset(
    kinds={"duckdb", "sklearn"},
    code_version=CODE_VERSION,
    **pooled(EMBEDDING_POOL),
    **asset_settings("insightgen", deps=[chunk_embeddings]),
)
def theme_graph(
    context: dg.AssetExecutionContext,
    config: InsightGenThemeGraphConfig,
    storage: StorageResource,
    embedder: EmbedderResource,
) -> dg.MaterializeResult:
    """Clusters of the collection's ~2,000-token chunks and a graph of their centroids.

    Nodes are cluster centroids; each is linked to its nearest centroids (default 5) and the
    minimum spanning tree of all centroids is added so the graph is connected; an edge carries the
    cosine distance between its two centroids. Each cluster is labelled by its top keyphrases.
    """
    settings = settings_of(ThemeGraphSettings, config, "theme_graph")
    return materialize_each(
        context, storage, lambda collection: _theme_graph(storage, embedder, settings, collection)
    )


def _theme_graph(
    storage: StorageResource, embedder: EmbedderResource, settings: ThemeGraphSettings, collection: str
) -> CollectionReport:
    variant = embedder.get_embedder().variant
    try:
        index = load_index(storage.warehouse, storage.vectors, collection, variant, insightgen.PROFILE)
    except IndexMissing as error:
        raise nothing_to_do(collection, f"nothing to cluster: {error}") from error
    started = time.perf_counter()
    graph, inputs = _kept_or_built(storage, settings, collection, index, variant)
    seconds = time.perf_counter() - started
    tables = graph.to_tables(collection)
    storage.warehouse.replace_partition(collection, tables)
    graph_archive.keep_graph(storage.warehouse, collection, inputs, tables)

    picture = render_theme_graph_png(graph, index.vectors)
    report_dir = Path(storage.reports_dir) / collection
    report_dir.mkdir(parents=True, exist_ok=True)
    picture_path = report_dir / "theme_graph.png"
    picture_path.write_bytes(picture)
    clusters = [
        {
            "cluster": cluster,
            "label": graph.labels[cluster],
            "chunks": graph.sizes[cluster],
            "neighbours": ", ".join(str(other) for other, _ in graph.neighbours(cluster)),
        }
        for cluster in range(graph.k)
    ]
    return CollectionReport(
        data_version=kept_builds.content_version(tables),
        metadata={
            "dagster/row_count": graph.k,
            "chunks": len(graph.chunk_ids),
            "clusters": graph.k,
            "edges": len(graph.edges),
            "method": graph.method,
            "cluster_rule": graph.cluster_rule,
            "themes": graph.account,
            "build_seconds": round(seconds, 3),
            "graph": dg.MetadataValue.md(
                f"![theme graph](data:image/png;base64,{base64.b64encode(picture).decode('ascii')})"
            ),
            "graph_file": dg.MetadataValue.path(str(picture_path.resolve())),
            "cluster_sizes": dg.MetadataValue.md(
                markdown_table(clusters, ["cluster", "label", "chunks", "neighbours"])
            ),
        },
    )


def _kept_or_built(
    storage: StorageResource, settings: ThemeGraphSettings, collection: str, index, variant: str
) -> tuple[ThemeGraph, str]:
    """The graph kept for these very chunks and settings (``graph_archive.py``), else one built
    carrying the last build's themes; and the digest of what it is made from."""
    chunk_ids, texts = [chunk.chunk_id for chunk in index.chunks], [chunk.text for chunk in index.chunks]
    inputs = graph_archive.built_from(chunk_ids, texts, settings, variant, CODE_VERSION)
    kept = graph_archive.kept_graph(storage.warehouse, collection, inputs)
    if kept is not None:
        restored = f"the graph built from these very chunks and settings on {kept[1][:19]}, restored"
        return dataclasses.replace(kept[0], account=restored), inputs
    previous = _last_graph(storage, collection)
    graph = build_theme_graph(chunk_ids, index.vectors, texts, settings, previous=previous, embedder=variant)
    return graph, inputs


def _last_graph(storage: StorageResource, collection: str) -> ThemeGraph | None:
    """The graph the last build stored for ``collection``, whose themes this build may keep."""
    try:
        return insightgen.store.load_theme_graph(storage.warehouse, collection)
    except IndexMissing:
        return None
