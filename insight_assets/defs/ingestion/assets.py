"""Ingestion assets: source files (source_files.py) -> parsed documents -> chunks (their vectors:
embeddings.py; the reader's notes: notes.py).

Each asset reads its inputs from the stores, calls the core, replaces its partition's rows and
reports what it did (counts, reuse, timings) as metadata.
"""

import functools
import time
from collections import Counter

import dagster as dg
from pydantic import Field

from insight_assets.core import papers
from insight_assets.core.collection_sources import CollectionSource
from insight_assets.core.ingestion import ingest, ingest_store
from insight_assets.core.ingestion.chunking import PASSAGE, PROFILES, SECTION, ChunkProfile
from insight_assets.core.ingestion.parser_version import PARSER_VERSION, parser_version
from insight_assets.core.ingestion.text_quality import QualitySettings
from insight_assets.core.runtime.cores import available_cores
from insight_assets.defs.ingestion.source_files import source_documents
from insight_assets.defs.materialization import CollectionReport, materialize_each
from insight_assets.defs.metadata import invalid_config, markdown_table
from insight_assets.defs.partitions import asset_settings, collection_check, existing_collection_source
from insight_assets.defs.progress import StepProgress
from insight_assets.defs.resources import StorageResource
from insight_assets.defs.stage_assets import dagster_config, settings_of


class IngestionParsingConfig(dagster_config(QualitySettings)):
    """The text-quality gate's thresholds (``core/ingestion/text_quality.py``'s ``QualitySettings``). A file
    whose text layer is garbled, or holds almost no text, is unusable; a few garbled pages are
    dropped with a warning. The defaults leave a margin around every real paper of the test corpus."""

    workers: int = Field(
        default=0,
        ge=0,
        description="Processes parsing files at once (0: one per core this step may use). "
        "Parsing runs one file per process at a time: a file that crashes the parser is reported, the rest go on.",
    )

    def quality(self) -> QualitySettings:
        return settings_of(QualitySettings, self, "parsed_documents")


@dg.asset(
    kinds={"pdf", "duckdb"},
    code_version=f"parser-{PARSER_VERSION}",
    check_specs=[collection_check("every_file_parsed", "parsed_documents")],
    **asset_settings("ingestion", deps=[source_documents]),
)
def parsed_documents(
    context: dg.AssetExecutionContext, config: IngestionParsingConfig, storage: StorageResource
) -> dg.MaterializeResult:
    """Text per page in reading order, with title, abstract, sections and references.

    A file that cannot be used (broken, encrypted, scanned, a garbled or nearly empty text layer)
    becomes a problem row (file, kind, message); the rest goes on. Each file's text-quality
    measures and verdict are in the `text_quality` table.
    """
    quality = config.quality()
    return materialize_each(
        context,
        storage,
        lambda collection: _parsed_documents(context, storage, collection, quality, config.workers),
    )


def _parsed_documents(
    context: dg.AssetExecutionContext,
    storage: StorageResource,
    collection: str,
    quality: QualitySettings,
    workers: int,
) -> CollectionReport:
    source = existing_collection_source(storage.collections_root, collection)
    warehouse = storage.warehouse
    version = parser_version(quality)
    with warehouse.session() as db:
        sources = _scanned_files(db, collection, source)
        documents, problems = ingest_store.stored_parse(db, collection)
    parsed, seconds, write_seconds = 0, 0.0, 0.0
    # Nothing to write when the stored rows already describe these very files: a no-change rerun
    # reads two small tables and stops.
    if not _parse_is_current(sources, documents, problems, version):
        parsed, seconds, write_seconds = _parse(
            context, storage, collection, sources, quality, version, workers
        )
    paper_rows = _write_papers(warehouse, collection)
    with warehouse.session() as db:
        documents, problems = ingest_store.stored_parse(db, collection)
        quality_rows = ingest_store.quality_rows(db, collection)
    errors = [problem for problem in problems if problem["severity"] == "error"]
    context.log.info(
        f"{collection}: parsed {parsed}, reused {len(sources) - parsed}, {len(errors)} unusable file(s)"
    )
    problems_table = dg.MetadataValue.md(
        markdown_table(problems, ["file", "kind", "severity", "message"], empty="No problems.")
    )
    quality_table = dg.MetadataValue.md(markdown_table(quality_rows, _QUALITY_COLUMNS, empty="No text."))
    if not documents:
        raise dg.Failure(
            description=f"collection {collection!r}: {_no_usable_documents(sources, errors)}",
            metadata={"problems": problems_table, "text_quality": quality_table},
        )
    kinds_by_file = _problem_kinds(problems)
    verdicts = Counter(row["verdict"] for row in quality_rows)
    return CollectionReport(
        metadata={
            "dagster/row_count": len(documents),
            "documents_parsed": parsed,
            "documents_reused": len(sources) - parsed,
            "files_with_errors": len(errors),
            "documents_degraded": verdicts["degraded"],
            "pages": sum(row["pages"] for row in documents),
            "characters": sum(row["characters"] for row in documents),
            "parse_seconds": round(seconds, 3),
            "write_seconds": round(write_seconds, 3),
            "problems": problems_table,
            "text_quality": quality_table,
            "preview": dg.MetadataValue.md(
                markdown_table(documents, _PREVIEW_COLUMNS, empty="No documents.")
            ),
        },
        checks=[_every_file_parsed(problems, len(errors), kinds_by_file)],
        data_version=_parse_version(version, sources, kinds_by_file, paper_rows),
    )


def _parse_version(version: str, sources, kinds_by_file: dict, paper_rows: list[dict]) -> str:
    """The parsed documents' data version: the parser, each file with its problems, the papers' rows."""
    return ingest.fingerprint(
        [version]
        + [f"{s.file}:{s.doc_id}:{sorted(kinds_by_file.get(s.file, []))}" for s in sources]
        + [repr(sorted(row.items())) for row in paper_rows]
    )


_PREVIEW_COLUMNS = ["file", "title", "pages", "characters", "sections", "references"]


def _scanned_files(db, collection: str, source: CollectionSource) -> list[ingest.SourceFile]:
    """The files `source_documents` scanned, where they are now. (A path is not stored: a shared
    warehouse serves machines that see the collection's files under other paths.)"""
    stored = ingest_store.stored_sources(db, collection)
    paths = source.located([row["file"] for row in stored])
    return [
        ingest.SourceFile(row["file"], paths[row["file"]], row["doc_id"], row["size_bytes"]) for row in stored
    ]


def _write_papers(warehouse, collection: str) -> list[dict]:
    """Each paper's metadata (the library's where it has an entry) into `papers`, and its
    library title into `parsed_documents`, when they changed: a metadata edit in the library
    rewrites these rows and nothing else of ingestion."""
    papers.apply_library_titles(warehouse, collection)
    rows = papers.paper_rows(warehouse, collection)
    stored = [row for _, row in sorted(papers.stored_papers(warehouse, collection).items())]
    if sorted(rows, key=lambda row: row["doc_id"]) != [dict(row) for row in stored]:
        warehouse.replace_partition(collection, {"papers": papers.papers_table(rows)})
    return rows


def _problem_kinds(problems: list[dict]) -> dict[str, list[str]]:
    """Each file's problems as ``kind:severity``."""
    kinds: dict[str, list[str]] = {}
    for problem in problems:
        kinds.setdefault(problem["file"], []).append(f"{problem['kind']}:{problem['severity']}")
    return kinds


def _parse(
    context: dg.AssetExecutionContext,
    storage: StorageResource,
    collection: str,
    sources: list[ingest.SourceFile],
    quality: QualitySettings,
    version: str,
    workers: int,
) -> tuple[int, float, float]:
    """Parse the files no stored parse describes and replace the collection's parse tables: the
    files parsed, and the seconds parsing and writing took."""
    outcome = ingest.parse_sources(
        sources,
        _reusable_parses(storage, collection, sources, version),
        on_parsed=functools.partial(StepProgress.of(context).count, what="papers parsed"),
        workers=workers or available_cores(),
        quality=quality,
    )
    started = time.perf_counter()
    storage.warehouse.replace_partition(collection, ingest.parse_tables(collection, outcome.results, version))
    return outcome.parsed, outcome.seconds, time.perf_counter() - started


def _every_file_parsed(problems: list[dict], errors: int, kinds_by_file: dict) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        check_name="every_file_parsed",
        passed=not problems,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "errors": errors,
            "warnings": len(problems) - errors,
            "files": ", ".join(sorted(kinds_by_file)) or "none",
        },
        description="Files that could not be parsed, or parsed with caveats, and why.",
    )


_QUALITY_COLUMNS = [
    "file",
    "verdict",
    "language",
    "pages",
    "chars_per_page",
    "junk_share",
    "word_share",
    "words_per_1000_chars",
    "mean_token_chars",
    "garbled_pages",
    "poor_pages",
]


def _no_usable_documents(sources: list[ingest.SourceFile], errors: list[dict]) -> str:
    """One sentence for a collection none of whose files can be used."""
    if not sources:
        return "no usable documents: `source_documents` lists no PDF files; add PDFs to the folder and build again."
    by_kind: dict[str, list[str]] = {}
    for error in errors:
        by_kind.setdefault(error["kind"], []).append(error["file"])
    reasons = "; ".join(f"{kind}: {', '.join(files)}" for kind, files in sorted(by_kind.items()))
    return (
        f"no usable documents: {len(sources)} file{'s' if len(sources) != 1 else ''}, none usable ({reasons}). "
        "Each file's reason and what to do are in this step's `problems` metadata."
    )


def _parse_is_current(
    sources: list[ingest.SourceFile], documents: list[dict], problems: list[dict], version: str
) -> bool:
    """Whether the stored rows are this parser's results for exactly these files."""
    if any(row["parser_version"] != version for row in documents + problems):
        return False
    stored = {(row["file"], row["doc_id"]) for row in documents}
    stored |= {(row["file"], row["doc_id"]) for row in problems if row["severity"] == "error"}
    return stored == {(source.file, source.doc_id) for source in sources} and len(documents) == len(
        {row["doc_id"] for row in documents}
    )


def _reusable_parses(
    storage: StorageResource, collection: str, sources: list[ingest.SourceFile], version: str
) -> dict[str, ingest.ParseResult]:
    """Earlier parses of the same bytes by the same parser and thresholds, from any collection."""
    doc_ids = [source.doc_id for source in sources]
    if not doc_ids:
        return {}
    return ingest.results_from_rows(
        sources, *ingest_store.parses_of(storage.warehouse, collection, doc_ids, version)
    )


class IngestionChunkingConfig(dg.Config):
    """Chunk profiles and their sizes in tokens (cl100k_base). Defaults are the papers'."""

    profiles: list[str] = Field(default=[SECTION, PASSAGE], description="Profiles to build.")
    section_target_tokens: int = Field(default=2000, description="InsightGen §4.1: about 2K tokens.")
    passage_target_tokens: int = Field(default=150, description="XSum §3.3: 150-token chunks.")
    passage_overlap_tokens: int = Field(default=20, description="XSum §3.3: 20 tokens of overlap.")

    def chunk_profiles(self) -> list[ChunkProfile]:
        with invalid_config("chunking"):
            sizes = {
                SECTION: ChunkProfile(SECTION, self.section_target_tokens, PROFILES[SECTION].overlap_tokens),
                PASSAGE: ChunkProfile(PASSAGE, self.passage_target_tokens, self.passage_overlap_tokens),
            }
        unknown = [name for name in self.profiles if name not in sizes]
        if unknown:
            raise dg.Failure(description=f"Unknown chunk profile(s) {unknown}; known: {sorted(sizes)}.")
        return [sizes[name] for name in self.profiles]


@dg.asset(
    kinds={"duckdb"},
    code_version=f"chunking-{ingest.CHUNKING_VERSION}",
    check_specs=[collection_check("no_empty_chunks", "chunks")],
    **asset_settings("ingestion", deps=[parsed_documents]),
)
def chunks(
    context: dg.AssetExecutionContext, config: IngestionChunkingConfig, storage: StorageResource
) -> dg.MaterializeResult:
    """Sentence-aware chunks per profile, with stable ids, page spans, offsets and token counts."""
    profiles = config.chunk_profiles()
    return materialize_each(context, storage, lambda collection: _chunks(storage, collection, profiles))


def _chunks(storage: StorageResource, collection: str, profiles: list[ChunkProfile]) -> CollectionReport:
    warehouse = storage.warehouse
    with warehouse.session() as db:
        documents, problems = ingest_store.stored_parse(db, collection)
        stored_keys = ingest_store.chunking_keys(db, collection)
        stats = ingest_store.chunk_stats(db, collection)
    # Chunks are a function of the parsed documents, the profiles and the chunking code: when all
    # three match what the stored chunks were made from, there is nothing to redo.
    key = ingest.fingerprint(
        [ingest.CHUNKING_VERSION]
        + [f"{p.name}:{p.target_tokens}/{p.overlap_tokens}" for p in profiles]
        + [f"{row['doc_id']}:{row['parser_version']}" for row in documents]
    )
    seconds, write_seconds = 0.0, 0.0
    if stored_keys != [key]:
        started = time.perf_counter()
        all_chunks = ingest.chunk_documents(ingest.load_documents(warehouse, collection), profiles)
        tables = {
            "chunks": ingest.chunks_table(collection, all_chunks),
            "chunk_runs": ingest.chunk_run_table(collection, key),
        }
        chunked = time.perf_counter()
        warehouse.replace_partition(collection, tables)
        seconds, write_seconds = chunked - started, time.perf_counter() - chunked
        with warehouse.session() as db:
            stats = ingest_store.chunk_stats(db, collection)
    empty = sum(row["empty"] for row in stats)
    metadata = {
        "dagster/row_count": sum(row["chunks"] for row in stats),
        "rechunked": bool(seconds),
        "chunk_seconds": round(seconds, 3),
        "write_seconds": round(write_seconds, 3),
        "profiles": ", ".join(
            f"{p.name} ({p.target_tokens} tokens, overlap {p.overlap_tokens})" for p in profiles
        ),
        "preview": dg.MetadataValue.md(_chunk_preview(documents, problems, stats, profiles)),
    }
    for profile in profiles:
        rows = [row for row in stats if row["profile"] == profile.name]
        count = sum(row["chunks"] for row in rows)
        metadata[f"{profile.name}_chunks"] = count
        metadata[f"{profile.name}_mean_tokens"] = (
            round(sum(row["tokens"] for row in rows) / count, 1) if count else 0.0
        )
    return CollectionReport(
        metadata=metadata,
        checks=[
            dg.AssetCheckResult(
                check_name="no_empty_chunks", passed=empty == 0, metadata={"empty_chunks": empty}
            )
        ],
        # The same documents, profiles and code make the same chunks.
        data_version=key,
    )


def _chunk_preview(
    documents: list[dict], problems: list[dict], stats: list[dict], profiles: list[ChunkProfile]
) -> str:
    """One row per file of the collection: pages, characters, chunks per profile and problems."""
    counts = {(row["doc_id"], row["profile"]): row["chunks"] for row in stats}
    kinds: dict[str, list[str]] = {}
    for problem in problems:
        kinds.setdefault(problem["file"], []).append(f"{problem['kind']} ({problem['severity']})")
    rows = [
        {
            "file": d["file"],
            "pages": d["pages"],
            "characters": d["characters"],
            **{f"{p.name} chunks": counts.get((d["doc_id"], p.name), 0) for p in profiles},
            "problems": ", ".join(kinds.pop(d["file"], [])) or "-",
        }
        for d in documents
    ]
    rows += [
        {"file": file, "pages": 0, "characters": 0, "problems": ", ".join(found)}
        for file, found in kinds.items()
    ]
    columns = ["file", "pages", "characters", *(f"{p.name} chunks" for p in profiles), "problems"]
    return markdown_table(sorted(rows, key=lambda row: row["file"]), columns, empty="No documents.")
