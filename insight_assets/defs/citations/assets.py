"""The ``citations`` asset: which paper of the collection cites which (``core/citations``)."""

import base64
from pathlib import Path

import dagster as dg

from insight_assets.core.citations import (
    CitingDocument,
    MatchSettings,
    build_citation_graph,
    co_citations,
    edge_table,
    reference_table,
    render_citation_graph_png,
)
from insight_assets.core.ingestion import ingest, ingest_store
from insight_assets.core.retrieval.index import short_title
from insight_assets.core.runtime.stage_output import items_check
from insight_assets.defs.ingestion.assets import parsed_documents
from insight_assets.defs.materialization import CollectionReport, materialize_each
from insight_assets.defs.metadata import check_result, markdown_table, nothing_to_do
from insight_assets.defs.partitions import asset_settings, collection_check
from insight_assets.defs.resources import StorageResource
from insight_assets.defs.stage_assets import dagster_config, settings_of

PREVIEW_ROWS = 30


# Thresholds of the reference matcher (``core/citations/matching.py``).
CitationsConfig = dagster_config(MatchSettings)


@dg.asset(
    kinds={"duckdb"},
    code_version="3",
    check_specs=[collection_check("citation_links", "citations")],
    **asset_settings("ingestion", deps=[parsed_documents]),
)
def citations(
    context: dg.AssetExecutionContext, config: CitationsConfig, storage: StorageResource
) -> dg.MaterializeResult:
    """Each paper's references matched to the collection's own papers: title similarity after
    normalisation, checked against the cited paper's authors and year.

    Edges (citing paper, cited paper, the reference, its match score) go to `citations`, every
    reference with its outcome to `paper_references` (an unmatched one says why), and the view
    `co_citations` counts the papers that cite two papers together. A collection without links
    (one paper, or no readable reference list) gets zero rows and a warning saying why; the
    methods that read links go on without them.
    """
    settings = settings_of(MatchSettings, config, "citations")
    return materialize_each(context, storage, lambda collection: _citations(storage, collection, settings))


def _citations(storage: StorageResource, collection: str, settings: MatchSettings) -> CollectionReport:
    rows = ingest_store.citing_documents(storage.warehouse, collection)
    documents = [
        CitingDocument(
            row["doc_id"], row["title"], row["first_page"], row["references_text"] or "", row["doi"]
        )
        for row in rows
    ]
    if not documents:
        raise nothing_to_do(collection, "no parsed documents to read references from.")
    graph = build_citation_graph(documents, settings)
    storage.warehouse.replace_partition(
        collection,
        {"paper_references": reference_table(collection, graph), "citations": edge_table(collection, graph)},
    )
    edges = graph.edges
    picture = render_citation_graph_png(graph.titles, edges)
    picture_path = Path(storage.reports_dir) / collection / "citation_graph.png"
    picture_path.parent.mkdir(parents=True, exist_ok=True)
    picture_path.write_bytes(picture)
    edge_rows, rejected, pairs = _previews(graph)
    without_references = [doc.doc_id for doc in documents if not graph.matches[doc.doc_id]]
    return CollectionReport(
        checks=[
            check_result(items_check("citation_links", len(edges), _why_no_links(graph, len(documents))))
        ],
        metadata={
            "dagster/row_count": len(edges),
            "papers": len(documents),
            "references": graph.reference_count,
            "references_matched": sum(1 for ms in graph.matches.values() for m in ms if m.cited_doc_id),
            "references_rejected": len(rejected),
            "papers_without_references": len(without_references),
            "graph": dg.MetadataValue.md(
                f"![citation graph](data:image/png;base64,{base64.b64encode(picture).decode('ascii')})"
            ),
            "graph_file": dg.MetadataValue.path(str(picture_path.resolve())),
            "edges": dg.MetadataValue.md(
                markdown_table(
                    edge_rows[:PREVIEW_ROWS],
                    ["citing", "cited", "score", "reference"],
                    empty="No paper of the collection cites another.",
                )
            ),
            "rejected_candidates": dg.MetadataValue.md(
                markdown_table(rejected[:PREVIEW_ROWS], ["citing", "candidate", "reason"], empty="None.")
            ),
            "co_citations": dg.MetadataValue.md(
                markdown_table(
                    pairs[:PREVIEW_ROWS], ["paper a", "paper b", "cited together by"], empty="None."
                )
            ),
        },
        data_version=ingest.fingerprint(
            sorted(f"{edge['citing_doc_id']}>{edge['cited_doc_id']}" for edge in edges)
            + [f"references:{graph.reference_count}"]
        ),
    )


def _previews(graph) -> tuple[list[dict], list[dict], list[dict]]:
    """For people: the links found, the candidates rejected (and why), the papers cited together."""

    def title(doc_id: str) -> str:
        return short_title(graph.titles[doc_id], words=8)

    edge_rows = [
        {
            "citing": title(edge["citing_doc_id"]),
            "cited": title(edge["cited_doc_id"]),
            "score": edge["match_score"],
            "reference": edge["reference_text"][:120],
        }
        for edge in graph.edges
    ]
    rejected = [
        {"citing": title(citing), "candidate": title(match.candidate_doc_id), "reason": match.reason}
        for citing, matches in graph.matches.items()
        for match in matches
        if match.candidate_doc_id and not match.cited_doc_id
    ]
    pairs = [
        {"paper a": title(a), "paper b": title(b), "cited together by": n}
        for a, b, n in co_citations(graph.edges)
    ]
    return edge_rows, rejected, pairs


def _why_no_links(graph, papers: int) -> str:
    """Why no paper of the collection was found citing another."""
    if not graph.reference_count:
        return (
            f"no references to match: none of its {papers} parsed documents has a references section that "
            "could be read (a heading such as 'References' or 'Bibliography'). Methods that read citation "
            "links go on without them."
        )
    if papers < 2:
        return "the collection holds one paper: there is no other paper for it to cite."
    return (
        f"none of the {graph.reference_count} references read names another paper of the collection "
        "(see `rejected_candidates` for near misses)."
    )
