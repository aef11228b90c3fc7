"""``collection_report``: data/reports/<collection>/index.html, one self-contained page per
collection with what every method made of it (see ``core/page/collection_page.py``)."""

import json
from pathlib import Path

import dagster as dg

from insight_assets.core.changes import store as changes_store
from insight_assets.core.changes.digest import as_markdown, headline, when
from insight_assets.core.citations.graph import citation_links, render_citation_graph_png
from insight_assets.core.ingestion import ingest_store
from insight_assets.core.ingestion.ingest import paper_names
from insight_assets.core.page.changes_section import since_section
from insight_assets.core.page.collection_page import (
    CollectionFacts,
    MethodSection,
    SideBySide,
    answered_the_question,
    render_page,
    standins,
)
from insight_assets.core.page.headlines import load_headlines
from insight_assets.core.storage import kept_builds
from insight_assets.defs import asking, reuse
from insight_assets.defs.domain import method_pages
from insight_assets.defs.materialization import CollectionReport, materialize_each
from insight_assets.defs.metadata import markdown_table, nothing_to_do
from insight_assets.defs.overview.changes import digest_page_path
from insight_assets.defs.overview.side_by_side import (
    SIDE_BY_SIDE,
    CollectionReportConfig,
    answer_every_method,
    page_question,
    side_by_side_key,
)
from insight_assets.defs.partitions import asset_settings
from insight_assets.defs.pools import LLM_POOL, pooled
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource

PAGE_FILE = "index.html"


PAGES = method_pages()


@dg.asset(
    kinds={"html"},
    code_version="1",
    **pooled(LLM_POOL),
    **asset_settings("overview", deps=[*(page.report for page in PAGES), "collection_changes"]),
)
def collection_report(
    context: dg.AssetExecutionContext,
    config: CollectionReportConfig,
    storage: StorageResource,
    embedder: EmbedderResource,
    llm: LLMResource,
) -> dg.MaterializeResult:
    """One page per collection, data/reports/<collection>/index.html, self-contained (no network,
    pictures embedded): the papers, the files that could not be read and why, the citation graph,
    each method's headline tables and chart with a link to its markdown report, one question
    answered by every method side by side with its citations and costs, and which model wrote and
    which judged (offline stand-ins said so at the top)."""
    return materialize_each(
        context, storage, lambda collection: _page(context, config, storage, embedder, llm, collection)
    )


def _page(
    context: dg.AssetExecutionContext,
    config: CollectionReportConfig,
    storage: StorageResource,
    embedder: EmbedderResource,
    llm: LLMResource,
    collection: str,
) -> CollectionReport:
    facts = _facts(storage, collection)
    if not facts.papers:
        raise nothing_to_do(collection, "no parsed paper to report on: `parsed_documents` holds none.")
    headlines = load_headlines(storage.warehouse, collection)
    sections = [
        MethodSection(page.method, page.title, page.paper, page.report_file, headlines.get(page.report_file))
        for page in PAGES
    ]
    side_by_side, asked = _side_by_side(context, config, storage, embedder, llm, collection)
    folder = Path(storage.reports_dir) / collection
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / PAGE_FILE
    since, digest = _since_last_build(storage, collection)
    path.write_text(render_page(collection, facts, sections, side_by_side, since), encoding="utf-8")
    answered = [a for a in side_by_side.answers if answered_the_question(a)]
    preview = [
        {
            "method": section.method,
            "report": section.report_file if section.headline else "not built",
            "answered": next(
                (
                    "yes"
                    if answered_the_question(a)
                    else f"no: {a['error'] or 'it found no answer in the papers'}"
                    for a in side_by_side.answers
                    if a["method"] == section.method
                ),
                "-",
            ),
        }
        for section in sections
    ]
    offline = standins(sections, side_by_side)
    return CollectionReport(
        metadata={
            "page": dg.MetadataValue.path(str(path.resolve())),
            "open": dg.MetadataValue.url(path.resolve().as_uri()),
            "preview": dg.MetadataValue.md(
                f"**{len(facts.papers)} papers**, question: {side_by_side.question or side_by_side.why_not}\n\n"
                + markdown_table(preview, ["method", "report", "answered"])
                + (f"\n\nOffline stand-ins: {', '.join(offline)}." if offline else "")
            ),
            "changes": dg.MetadataValue.md(digest),
            "methods_reported": sum(s.headline is not None for s in sections),
            "methods_answered": len(answered),
            "answers": asked,
            "bytes": path.stat().st_size,
        }
    )


def _since_last_build(storage: StorageResource, collection: str) -> tuple[str, str]:
    """The page's "Since the last build" section and the digest's Markdown, as the command line
    and the MCP tool give them (``store.digest_data``), with links to the earlier builds' digest
    pages."""
    try:
        data = changes_store.digest_data(storage.warehouse, collection)
    except changes_store.NoSuchBuild:
        return since_section(None, ()), "No build of this collection has compared with another yet."
    folder = Path(storage.reports_dir) / collection
    earlier = [
        (str(page.relative_to(folder)), f"{when(change_set.built_at)}: {headline(change_set)}")
        for change_set in changes_store.change_sets(storage.warehouse, collection)
        if change_set.changed
        and change_set.build_id != data["build"]
        and (page := digest_page_path(folder, change_set.built_at, change_set.build_id)).exists()
    ]
    return since_section(data, earlier), as_markdown(data, page_link=None)


def _facts(storage: StorageResource, collection: str) -> CollectionFacts:
    with storage.warehouse.session() as db:
        papers = [{**row, "title": row["title"] or row["file"]} for row in paper_names(db, collection)]
        problems = ingest_store.problems_by_severity(db, collection)
        chunks = ingest_store.chunk_counts(db, collection)
        links = citation_links(db, collection)
    titles = {paper["doc_id"]: paper["title"] for paper in papers}
    edges = [{"citing_doc_id": citing, "cited_doc_id": cited} for citing, cited in links]
    return CollectionFacts(
        papers=papers,
        problems=problems,
        chunks=chunks,
        citation_links=len(edges),
        citation_graph_png=render_citation_graph_png(titles, edges) if titles else b"",
    )


def _side_by_side(
    context: dg.AssetExecutionContext,
    config: CollectionReportConfig,
    storage: StorageResource,
    embedder: EmbedderResource,
    llm: LLMResource,
    collection: str,
) -> tuple[SideBySide, str]:
    """The page's question answered by every method, and how the answers came: asked in this run,
    or kept from an earlier run whose answers read what these would."""
    question, why_not = page_question(config, storage.warehouse, collection)
    if question is None:
        return SideBySide(None, why_not=why_not), "none asked"

    def open_client():
        return llm.client(
            asset="collection_report", partition=collection, run_id=context.run_id, logger=context.log
        )

    key = side_by_side_key(reuse.step_inputs(context, storage.warehouse.builds(collection)), question)
    kept = kept_builds.kept(storage.warehouse, collection, SIDE_BY_SIDE, key)
    if kept is not None:
        why = f"kept from run {kept.run_id[:8]}: nothing they read changed"
        return SideBySide(question, json.loads(kept.report)), why
    asked = asking.Asked(collection, question, storage, embedder)
    answers = answer_every_method(
        asked,
        open_client,
        lambda method: context.log.info(f"{collection}: {method} answers {question!r}"),
        at_once=llm.settings().is_hosted,
    )
    found = [answer.as_dict() for answer in answers]
    if not any(answer.may_answer_later for answer in answers):
        kept = kept_builds.KeptBuild(key, json.dumps(found, default=str), None, context.run_id, {})
        kept_builds.keep(storage.warehouse, collection, SIDE_BY_SIDE, kept, key)
    return SideBySide(question, found), "asked in this run"
