"""The source_documents asset: a collection's files as its source holds them (a folder, or a
library's collection with its items' metadata, the reader's notes and the items left out)."""

import time

import dagster as dg

from insight_assets.core import papers
from insight_assets.core.collection_sources import CollectionSource
from insight_assets.core.curation import USER_QUESTIONS_FILE
from insight_assets.core.ingestion import ingest, ingest_store
from insight_assets.core.ingestion.documents import sha256_file
from insight_assets.core.library import LibraryError
from insight_assets.defs.materialization import CollectionReport, materialize_each
from insight_assets.defs.metadata import markdown_table
from insight_assets.defs.partitions import asset_settings, collection_check, existing_collection_source
from insight_assets.defs.resources import StorageResource

# How many items' reasons the sentence of a collection without any PDF names.
FIRST_REASONS = 3


@dg.asset(
    kinds={"pdf", "duckdb"},
    code_version="3",
    check_specs=[collection_check("every_item_has_a_pdf", "source_documents")],
    **asset_settings("ingestion"),
)
def source_documents(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
    """The PDFs of a collection: one row per file with its sha256, size and page count; for a
    library's collection also each file's library entry (`library_items`), the reader's highlights
    and notes (`reader_notes`) and the items without a usable PDF (`source_problems`). It reads
    the folder or library, so every run scans it (nothing upstream tells what changed there); its data version
    is the files' content, so a folder whose files are the same leaves everything below it as it is."""
    return materialize_each(
        context, storage, lambda collection: _source_documents(storage, collection), reuse_builds=False
    )


def _source_documents(storage: StorageResource, collection: str) -> CollectionReport:
    source = existing_collection_source(storage.collections_root, collection)
    started = time.perf_counter()
    try:
        contents = source.contents()
    except LibraryError as error:
        raise dg.Failure(description=f"collection {collection!r}: {error}") from error
    sources = ingest.scan_papers(contents.papers)
    stored = ingest_store.stored_sources(storage.warehouse, collection)
    # A file already counted is not opened again.
    table = ingest.sources_table(collection, sources, {row["doc_id"]: row["pages"] for row in stored})
    library = papers.library_tables(collection, source, sources, contents)
    scanned = time.perf_counter()
    rows = table.select(["file", "doc_id", "size_bytes", "pages"]).to_pylist()
    # A no-change rerun writes nothing.
    if stored != rows or ingest_store.rows_differ(storage.warehouse, collection, library):
        storage.warehouse.replace_partition(collection, {"source_documents": table, **library})
    written = time.perf_counter()
    problems = library["source_problems"].to_pylist()
    if not sources:
        raise dg.Failure(
            description=f"collection {collection!r}: no usable documents: {_no_pdf_reason(source, problems)}",
            metadata={"problems": _source_problems_table(problems)},
        )
    questions = source.folder / USER_QUESTIONS_FILE
    return CollectionReport(
        metadata={
            "dagster/row_count": len(rows),
            "source": f"{source.kind}: {source.origin}",
            "folder": dg.MetadataValue.path(str(source.folder.resolve())),
            "total_bytes": sum(row["size_bytes"] for row in rows),
            "library_items": library["library_items"].num_rows,
            "reader_notes": library["reader_notes"].num_rows,
            "items_without_pdf": sum(problem["severity"] == "error" for problem in problems),
            "problems": _source_problems_table(problems),
            # Hashing every file and counting the pages of new ones.
            "scan_seconds": round(scanned - started, 3),
            "write_seconds": round(written - scanned, 3),
            "preview": dg.MetadataValue.md(
                markdown_table(
                    rows, ["file", "pages", "size_bytes", "doc_id"], empty="No PDF files in the folder."
                )
            ),
        },
        checks=[_every_item_has_a_pdf(problems)],
        # The papers' content, not their timestamps, decides what downstream is stale: the PDFs,
        # their library entries and notes, and the collection's own questions (read by
        # `generated_questions`).
        data_version=ingest.fingerprint(
            [f"{s.file}:{s.doc_id}" for s in sources]
            + papers.library_fingerprint(library)
            + ([f"{USER_QUESTIONS_FILE}:{sha256_file(questions)}"] if questions.is_file() else [])
        ),
    )


def _no_pdf_reason(source: CollectionSource, problems: list[dict]) -> str:
    if source.library is None:
        return f"the folder {source.folder.resolve()} has no PDF files. Put PDFs in it (sub-folders are read too) and build again."
    errors = [problem for problem in problems if problem.get("severity", "error") == "error"]
    first = " ".join(str(problem["message"]) for problem in errors[:FIRST_REASONS])
    more = f" ({len(errors) - FIRST_REASONS} more: see `problems`, or insight-assets library show {source.library.name})"
    return (
        f"no item of {source.kind} library {source.library.name!r} ({source.origin}) in this collection has a PDF "
        f"that exists ({len(errors)} item(s) without one). {first}"
        + (more if len(errors) > FIRST_REASONS else "")
    )


def _source_problems_table(problems: list[dict]) -> dg.MetadataValue:
    return dg.MetadataValue.md(
        markdown_table(problems, ["item", "kind", "severity", "message"], empty="No problems.")
    )


def _every_item_has_a_pdf(problems: list[dict]) -> dg.AssetCheckResult:
    errors = [problem for problem in problems if problem["severity"] == "error"]
    return dg.AssetCheckResult(
        check_name="every_item_has_a_pdf",
        passed=not errors,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "items_without_pdf": len(errors),
            "items": ", ".join(p["item"] for p in errors[:20]) or "none",
        },
        description="Library items left out of the collection (no PDF, a missing file, a malformed entry), and why.",
    )
