"""SciPIP's assets: its declared stages (``core/methods/scipip/stages/``: the collection as a
literature database, SKC retrievals for the user's research backgrounds and, as leave-one-out
examples, for every paper's own background, with their recall; ideas by the dual path, each path
alone and a direct prompt; and their scores with the report), and the paper-keyword graph."""

import base64
from pathlib import Path

import dagster as dg

from insight_assets.core.methods import scipip
from insight_assets.core.methods.scipip import report, stages
from insight_assets.core.startup.lazy import pa
from insight_assets.core.storage import kept_builds
from insight_assets.defs.materialization import CollectionReport, materialize_each
from insight_assets.defs.metadata import markdown_table, nothing_to_do
from insight_assets.defs.partitions import asset_settings
from insight_assets.defs.resources import StorageResource
from insight_assets.defs.stage_assets import stage_assets

ASSETS = stage_assets(stages.STAGES)


# -- keyword graph ---------------------------------------------------------------------------------


@dg.asset(kinds={"duckdb"}, code_version="1", **asset_settings("scipip", deps=[stages.SUMMARIES]))
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
    tables = {
        "scipip_keyword_edges": pa.Table.from_pylist(
            [{"collection": collection, "doc_id": doc, "keyword": keyword} for doc, keyword in edges]
        ),
        "scipip_keyword_pairs": pa.Table.from_pylist(
            [
                {"collection": collection, "keyword_a": a, "keyword_b": b, "papers": count}
                for (a, b), count in sorted(pairs.items())
            ]
        ),
    }
    warehouse.replace_partition(collection, tables)
    shared = sorted(graph.holders, key=lambda k: (-len(graph.holders[k]), k))[:15]
    picture = report.keyword_graph_png(graph)
    report_dir = Path(storage.reports_dir) / collection
    report_dir.mkdir(parents=True, exist_ok=True)
    picture_path = report_dir / "scipip_keyword_graph.png"
    picture_path.write_bytes(picture)
    return CollectionReport(
        # The rows' digest: the same graph leaves SciPIP's stages as they were (or restorable).
        data_version=kept_builds.content_version(tables),
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
        },
    )


# -- retrievals ------------------------------------------------------------------------------------
