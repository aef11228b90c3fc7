"""Ingestion of one collection: scan, parse, chunk — each step reusing what is unchanged.

Everything is keyed by content: a document by the sha256 of its bytes, a chunk by its document and
span (vectors, in ``vectorize.py``, by the sha256 of the chunk text and the embedder variant). A step
asks the stores what already exists and only computes the rest; its counters say how much was reused.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from insight_assets.core.ingestion.boilerplate import BoilerplateSpan
from insight_assets.core.ingestion.chunking import ChunkProfile, chunk_document
from insight_assets.core.ingestion.documents import (
    Chunk,
    ParsedDocument,
    ParseProblem,
    ParseResult,
    sha256_file,
)
from insight_assets.core.ingestion.text_quality import TextVerdict
from insight_assets.core.runtime.forked import forked_map
from insight_assets.core.startup.lazy import pa

if TYPE_CHECKING:
    from insight_assets.core.collection_sources import Paper
    from insight_assets.core.ingestion.text_quality import QualitySettings
    from insight_assets.core.library import LibraryItem
    from insight_assets.core.storage.stores import Warehouse


@dataclass(frozen=True)
class SourceFile:
    """One PDF of a collection; ``file`` is its name in the collection (its path relative to a
    folder collection; ``<item key>/<file name>`` in a library's), ``item`` its library entry."""

    file: str
    path: Path
    doc_id: str
    size_bytes: int
    item: LibraryItem | None = None


def scan_papers(papers: Iterable[Paper]) -> list[SourceFile]:
    """Each paper's file, hashed, in name order."""
    return sorted(
        (SourceFile(p.file, p.path, sha256_file(p.path), p.path.stat().st_size, p.item) for p in papers),
        key=lambda source: source.file,
    )


def fingerprint(parts: Iterable[str]) -> str:
    """A short stable digest of ordered strings: the data version of an artifact."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()[:16]


def sources_table(
    collection: str, sources: Sequence[SourceFile], known_pages: Mapping[str, int] | None = None
) -> pa.Table:
    """One row per file; the page count is opened for only the files whose content
    (``doc_id``) is not in ``known_pages``."""
    known_pages = known_pages or {}
    return pa.Table.from_pylist(
        [
            {
                "collection": collection,
                "file": source.file,
                "doc_id": source.doc_id,
                "size_bytes": source.size_bytes,
                "pages": known_pages[source.doc_id]
                if source.doc_id in known_pages
                else _count_pages(source.path),
            }
            for source in sources
        ],
        schema=pa.schema(
            [
                ("collection", pa.string()),
                ("file", pa.string()),
                ("doc_id", pa.string()),
                ("size_bytes", pa.int64()),
                ("pages", pa.int32()),
            ]
        ),
    )


# ---------------------------------------------------------------------------------------------
# Parsing


@dataclass
class ParseOutcome:
    results: list[ParseResult]
    parsed: int = 0
    reused: int = 0
    seconds: float = 0.0


def _count_pages(path: Path) -> int:
    from insight_assets.core.ingestion.pdf import count_pages  # the parser loads when a file is opened

    return count_pages(path)


def parse_sources(
    sources: Sequence[SourceFile],
    reusable: dict[str, ParseResult],
    parse: Callable[..., ParseResult] | None = None,
    on_parsed: Callable[[int, int], None] = lambda done, total: None,
    workers: int = 1,
    quality: QualitySettings | None = None,
) -> ParseOutcome:
    """Parse each source whose ``doc_id`` is not in ``reusable`` (with ``parse``, by default
    ``core.ingestion.pdf.parse_pdf`` with the text-quality gate's ``quality``, else its defaults); reuse the
    others as they are. ``on_parsed(done, total)`` hears of each file parsed (of those to parse).

    Files are parsed in ``workers`` forked processes at once (``core/runtime/forked.py``); a file that
    crashes the parser becomes an unreadable-file problem."""
    started = time.perf_counter()
    outcome = ParseOutcome(results=[])
    to_parse = [source for source in sources if source.doc_id not in reusable]

    def count_one() -> None:
        outcome.parsed += 1
        on_parsed(outcome.parsed, len(to_parse))

    fresh: list[ParseResult] = []
    if to_parse:
        from insight_assets.core.ingestion import (
            pdf,  # the parser, loaded once here and inherited by every worker
        )

        parse_one = parse or functools.partial(pdf.parse_pdf, quality=quality or pdf.DEFAULT_QUALITY)
        fresh = forked_map(
            lambda source: parse_one(source.path, doc_id=source.doc_id),
            to_parse,
            workers=workers,
            crashed=lambda source, how: pdf.crashed_parse(source.path, source.doc_id, how),
            on_done=count_one,
        )
    fresh_results = iter(fresh)
    for source in sources:
        # Same bytes, same parser: an earlier result stands, renamed if the file moved.
        result = reusable[source.doc_id] if source.doc_id in reusable else next(fresh_results)
        result.file = source.file
        if result.document is not None:
            result.document.file = source.file
        outcome.results.append(result)
    outcome.reused = len(sources) - len(to_parse)
    outcome.seconds = time.perf_counter() - started
    return outcome


def parse_tables(collection: str, results: Sequence[ParseResult], parser_version: str) -> dict[str, pa.Table]:
    """The warehouse rows for a collection's parse results, made by ``parser_version``."""
    documents, pages, problems, quality = [], [], [], []
    for result in results:
        for problem in result.problems:
            problems.append(
                {
                    "collection": collection,
                    "file": result.file,
                    "doc_id": result.doc_id,
                    "kind": problem.kind,
                    "severity": problem.severity,
                    "message": problem.message,
                    "parser_version": parser_version,
                }
            )
        if result.quality is not None:
            quality.append(
                {"collection": collection, "file": result.file, "doc_id": result.doc_id}
                | _quality_row(result.quality)
                | {"parser_version": parser_version}
            )
        document = result.document
        if document is None:
            continue
        documents.append(
            {
                "collection": collection,
                "doc_id": document.doc_id,
                "file": result.file,
                "title": document.title,
                "abstract": document.abstract,
                "sections": list(document.sections),
                "references_text": document.references,
                "page_count": document.page_count,
                "char_count": len(document.text),
                "body_end": document.body_end,
                "parser_version": parser_version,
                "boilerplate": boilerplate_json(document),
                "pdf_title": document.title,
            }
        )
        pages.extend(
            {"collection": collection, "doc_id": document.doc_id, "page": number, "text": text}
            for number, text in enumerate(document.page_texts, start=1)
        )
    return {
        "parsed_documents": _table(documents, _parsed_schema()),
        "parsed_pages": _table(pages, _pages_schema()),
        "parse_problems": _table(problems, _problems_schema()),
        "text_quality": _table(quality, _quality_schema()),
    }


def boilerplate_json(document: ParsedDocument) -> str:
    """The document's boilerplate spans as stored: kind, offsets into its text, and the text."""
    return json.dumps(
        [
            {
                "kind": span.kind,
                "char_start": span.char_start,
                "char_end": span.char_end,
                "text": document.text[span.char_start : span.char_end],
            }
            for span in document.boilerplate
        ],
        ensure_ascii=False,
    )


# A verdict's stored columns: all but the per-page reasons, which live on in the problem messages.
_QUALITY_FIELDS = [field.name for field in dataclasses.fields(TextVerdict) if field.name != "page_reasons"]


def _quality_row(verdict: TextVerdict) -> dict:
    return {name: getattr(verdict, name) for name in _QUALITY_FIELDS}


def results_from_rows(
    sources: Sequence[SourceFile],
    documents: list[dict],
    pages: list[dict],
    problems: list[dict],
    quality: Sequence[dict] = (),
) -> dict[str, ParseResult]:
    """Rebuild parse results stored by ``parse_tables`` (from any collection), keyed by doc_id."""
    sizes = {source.doc_id: source.size_bytes for source in sources}
    texts: dict[str, list[tuple[int, str]]] = {}
    for row in pages:
        texts.setdefault(row["doc_id"], []).append((row["page"], row["text"]))
    verdicts = {
        row["doc_id"]: TextVerdict(**{name: row[name] for name in _QUALITY_FIELDS}) for row in quality
    }
    results: dict[str, ParseResult] = {}
    for row in documents:
        doc_id = row["doc_id"]
        if doc_id in results or doc_id not in texts:
            continue
        page_texts = [text for _, text in sorted(texts[doc_id])]
        document = ParsedDocument(
            doc_id=doc_id,
            file=row["file"],
            page_texts=page_texts,
            # The parser's title: ``title`` may be a library's (``papers.apply_library_titles``).
            title=row.get("pdf_title") or row["title"],
            abstract=row["abstract"],
            sections=list(row["sections"] or []),
            references=row["references_text"],
            body_end=row["body_end"],
            boilerplate=[
                BoilerplateSpan(span["kind"], span["char_start"], span["char_end"])
                for span in json.loads(row.get("boilerplate") or "[]")
            ],
        )
        results[doc_id] = ParseResult(
            row["file"], doc_id, sizes.get(doc_id, 0), document, [], verdicts.get(doc_id)
        )
    for row in problems:
        result = results.get(row["doc_id"])
        if result is None:
            if row["severity"] != "error":
                continue  # a warning belongs to a document whose pages are missing here: parse again
            result = results.setdefault(
                row["doc_id"],
                ParseResult(
                    row["file"],
                    row["doc_id"],
                    sizes.get(row["doc_id"], 0),
                    None,
                    [],
                    verdicts.get(row["doc_id"]),
                ),
            )
        problem = ParseProblem(row["kind"], row["message"], row["severity"])
        if problem not in result.problems:
            result.problems.append(problem)
    return results


def load_documents(warehouse: Warehouse, collection: str) -> list[ParsedDocument]:
    """The collection's parsed documents, rebuilt from the warehouse, in file order."""
    with warehouse.session() as db:
        documents = db.rows("SELECT * FROM parsed_documents WHERE collection = ? ORDER BY file", [collection])
        pages = db.rows(
            "SELECT doc_id, page, text FROM parsed_pages WHERE collection = ? ORDER BY doc_id, page",
            [collection],
        )
    results = results_from_rows([], documents, pages, [])
    return [results[row["doc_id"]].document for row in documents if row["doc_id"] in results]


def paper_names(warehouse: Warehouse, collection: str) -> list[dict]:
    """Each parsed paper's ``doc_id``, ``file``, ``title`` (``None`` when none was found) and
    ``pages``, by file, with its library metadata where it has some (``authors``, ``year``,
    ``doi``, ``citekey``, ``link``: ``None`` or empty otherwise)."""
    return warehouse.rows(
        """SELECT d.doc_id, d.file, d.title, d.page_count AS pages, coalesce(p.authors, []) AS authors,
                  p.year, p.doi, p.citekey, p.link
           FROM parsed_documents d LEFT JOIN papers p USING (collection, doc_id)
           WHERE d.collection = ? ORDER BY d.file""",
        [collection],
    )


def paper_titles(warehouse: Warehouse, collection: str) -> dict[str, str]:
    """Document id -> title (the file name of a paper without one), for every parsed paper."""
    return {row["doc_id"]: row["title"] or row["file"] for row in paper_names(warehouse, collection)}


def paper_count(warehouse: Warehouse, collection: str) -> int:
    """How many papers of the collection were parsed."""
    return warehouse.rows("SELECT count(*) AS n FROM parsed_documents WHERE collection = ?", [collection])[0][
        "n"
    ]


# ---------------------------------------------------------------------------------------------
# Chunking


# Bump whenever the chunks made from the same documents and profiles can change.
CHUNKING_VERSION = "4"


def chunk_run_table(collection: str, chunking_key: str) -> pa.Table:
    """The row that records what a collection's stored chunks were made from."""
    return pa.table({"collection": [collection], "chunking_key": [chunking_key]})


def chunk_documents(documents: Iterable[ParsedDocument], profiles: Sequence[ChunkProfile]) -> list[Chunk]:
    """Every document chunked for every profile.

    Finer profiles are chunked inside the chunks of the coarsest profile (when that one has no
    overlap): a fine chunk never straddles a coarse boundary, so a coarse chunk's vector can be
    pooled exactly from the fine vectors it holds (see ``vectorize.py``). The price: fine chunks do
    not overlap across a coarse boundary, once every ~2,000 tokens.
    """
    coarsest = max(profiles, key=lambda profile: profile.target_tokens, default=None)
    nest = coarsest is not None and coarsest.overlap_tokens == 0 and len(profiles) > 1
    chunks: list[Chunk] = []
    for document in documents:
        coarse = chunk_document(document, coarsest) if nest else []
        spans = [(chunk.char_start, chunk.char_end) for chunk in coarse] if nest else None
        for profile in profiles:
            chunks.extend(
                coarse if nest and profile is coarsest else chunk_document(document, profile, within=spans)
            )
    return chunks


def chunks_table(collection: str, chunks: Sequence[Chunk]) -> pa.Table:
    return _table(
        [
            {
                "collection": collection,
                "profile": c.profile,
                "chunk_id": c.chunk_id,
                "doc_id": c.doc_id,
                "chunk_index": c.index,
                "text": c.text,
                "char_start": c.char_start,
                "char_end": c.char_end,
                "page_start": c.page_start,
                "page_end": c.page_end,
                "token_count": c.token_count,
                "text_sha": c.text_sha,
            }
            for c in chunks
        ],
        _chunks_schema(),
    )


def _table(rows: list[dict], schema: pa.Schema) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=schema)


@functools.cache
def _parsed_schema() -> pa.Schema:
    return pa.schema(
        [
            ("collection", pa.string()),
            ("doc_id", pa.string()),
            ("file", pa.string()),
            ("title", pa.string()),
            ("abstract", pa.string()),
            ("sections", pa.list_(pa.string())),
            ("references_text", pa.string()),
            ("page_count", pa.int32()),
            ("char_count", pa.int64()),
            ("body_end", pa.int64()),
            ("parser_version", pa.string()),
            ("boilerplate", pa.string()),
            ("pdf_title", pa.string()),
        ]
    )


@functools.cache
def _pages_schema() -> pa.Schema:
    return pa.schema(
        [("collection", pa.string()), ("doc_id", pa.string()), ("page", pa.int32()), ("text", pa.string())]
    )


@functools.cache
def _problems_schema() -> pa.Schema:
    return pa.schema(
        [
            ("collection", pa.string()),
            ("file", pa.string()),
            ("doc_id", pa.string()),
            ("kind", pa.string()),
            ("severity", pa.string()),
            ("message", pa.string()),
            ("parser_version", pa.string()),
        ]
    )


@functools.cache
def _quality_schema() -> pa.Schema:
    return pa.schema(
        [
            ("collection", pa.string()),
            ("file", pa.string()),
            ("doc_id", pa.string()),
            ("verdict", pa.string()),
            ("language", pa.string()),
            ("pages", pa.int32()),
            ("chars", pa.int64()),
            ("junk_share", pa.float64()),
            ("word_share", pa.float64()),
            ("words_per_1000_chars", pa.float64()),
            ("mean_token_chars", pa.float64()),
            ("kind", pa.string()),
            ("reason", pa.string()),
            ("garbled_pages", pa.list_(pa.int32())),
            ("poor_pages", pa.list_(pa.int32())),
            ("parser_version", pa.string()),
        ]
    )


@functools.cache
def _chunks_schema() -> pa.Schema:
    return pa.schema(
        [
            ("collection", pa.string()),
            ("profile", pa.string()),
            ("chunk_id", pa.string()),
            ("doc_id", pa.string()),
            ("chunk_index", pa.int32()),
            ("text", pa.string()),
            ("char_start", pa.int64()),
            ("char_end", pa.int64()),
            ("page_start", pa.int32()),
            ("page_end", pa.int32()),
            ("token_count", pa.int32()),
            ("text_sha", pa.string()),
        ]
    )
