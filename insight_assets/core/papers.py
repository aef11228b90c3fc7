"""What a collection knows about each paper beyond its PDF: the library's entry (title, authors,
year, venue, DOI, key, citekey, link back), the reader's highlights and notes, the items that could
not be used, and the ``papers`` table that every method cites papers by.

Where a paper came from a library, the library's metadata wins over what the parser guessed from
the PDF, and a disagreement (a title the PDF spells otherwise) is recorded in ``papers.differences``.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING

from insight_assets.core.ingestion.documents import sha256_text
from insight_assets.core.startup.lazy import pa
from insight_assets.core.storage.stores import SCHEMA, Warehouse

if TYPE_CHECKING:
    from insight_assets.core.collection_sources import CollectionSource, SourceContents

YOUR_NOTES = "your notes"


def library_tables(
    collection: str, source: CollectionSource, files: Sequence, contents: SourceContents
) -> dict[str, pa.Table]:
    """The rows ``source_documents`` writes beside the files: each file's library entry, the
    reader's notes on it, the items without a usable PDF, and the source's signature. ``files``
    are the scanned ``ingest.SourceFile`` values (their ``doc_id`` is the file's content)."""
    items, notes = [], []
    for scanned in files:
        if scanned.item is None:
            continue
        item = scanned.item
        items.append(
            {"collection": collection, "file": scanned.file, "doc_id": scanned.doc_id, "source": source.kind}
            | item.metadata()
        )
        where = {
            "collection": collection,
            "doc_id": scanned.doc_id,
            "file": scanned.file,
            "item_key": item.key,
        }
        notes += [where | dataclasses.asdict(note) for note in item.notes]
    problems = [{"collection": collection} | dataclasses.asdict(problem) for problem in contents.problems]
    state = [
        {
            "collection": collection,
            "kind": source.kind,
            "origin": source.origin,
            "signature": source.signature(),
        }
    ]
    return {
        "library_items": _table(items, "library_items"),
        "reader_notes": _table(notes, "reader_notes"),
        "source_problems": _table(problems, "source_problems"),
        "source_states": _table(state, "source_states"),
    }


def library_fingerprint(tables: dict[str, pa.Table]) -> list[str]:
    """What the library rows hold, for ``source_documents``' data version: metadata and notes
    edited in the library make the collection's papers stale."""
    return [
        sha256_text(repr(tables[name].drop(["collection"]).to_pylist()))
        for name in ("library_items", "reader_notes")
    ]


def apply_library_titles(warehouse: Warehouse, collection: str) -> None:
    """Give each parsed paper its library title (the library wins over the PDF); a paper with no
    library entry, or an entry without a title, keeps the parser's. Only changed rows are written."""
    warehouse.write(
        lambda connection: connection.execute(
            """UPDATE parsed_documents d SET title = wanted.title
               FROM (SELECT p.doc_id, coalesce(nullif(l.title, ''), p.pdf_title, p.title) AS title
                     FROM parsed_documents p
                     LEFT JOIN (SELECT doc_id, arg_min(title, file) AS title FROM library_items
                                WHERE collection = ? GROUP BY doc_id) l USING (doc_id)
                     WHERE p.collection = ?) wanted
               WHERE d.collection = ? AND d.doc_id = wanted.doc_id AND d.title IS DISTINCT FROM wanted.title""",
            [collection, collection, collection],
        )
    )


def paper_rows(warehouse: Warehouse, collection: str) -> list[dict]:
    """One ``papers`` row per parsed paper: its library entry's metadata where it has one, else
    what the PDF gave, with each disagreement between the two."""
    rows = warehouse.rows(
        """SELECT d.doc_id, d.file, coalesce(d.pdf_title, d.title) AS pdf_title, l.source, l.item_key,
                  l.citekey, l.title, l.authors, l.year, l.venue, l.doi, l.link
           FROM parsed_documents d
           LEFT JOIN (SELECT * FROM library_items WHERE collection = ?
                      QUALIFY row_number() OVER (PARTITION BY doc_id ORDER BY file) = 1) l USING (doc_id)
           WHERE d.collection = ? ORDER BY d.file""",
        [collection, collection],
    )
    papers = []
    for row in rows:
        differences = []
        if row["title"] and row["pdf_title"] and not same_title(row["title"], row["pdf_title"]):
            differences.append(f"title: the library says {row['title']!r}, the PDF {row['pdf_title']!r}")
        papers.append(
            {
                "collection": collection,
                "doc_id": row["doc_id"],
                "file": row["file"],
                "title": row["title"] or row["pdf_title"] or row["file"],
                "authors": list(row["authors"] or []),
                "year": row["year"],
                "venue": row["venue"],
                "doi": row["doi"],
                "item_key": row["item_key"],
                "citekey": row["citekey"],
                "link": row["link"],
                "source": row["source"] or "pdf",
                "pdf_title": row["pdf_title"],
                "differences": differences,
            }
        )
    return papers


def papers_table(rows: list[dict]) -> pa.Table:
    return _table(rows, "papers")


def same_title(a: str, b: str) -> bool:
    """Whether two spellings of a title are the same title (case, punctuation, ligatures and
    spacing aside)."""
    return _words(a) == _words(b)


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", unicodedata.normalize("NFKC", text).lower()))


def stored_papers(warehouse: Warehouse, collection: str) -> dict[str, dict]:
    """doc_id -> the paper's row in ``papers`` (empty before the collection is parsed)."""
    return {
        row["doc_id"]: row
        for row in warehouse.rows("SELECT * FROM papers WHERE collection = ?", [collection])
    }


def citation_label(paper: dict | None) -> str:
    """How a citation names a paper beside its title: its citekey, else its DOI ('' for neither)."""
    if not paper:
        return ""
    if paper.get("citekey"):
        return f"@{paper['citekey']}"
    return f"doi:{paper['doi']}" if paper.get("doi") else ""


@functools.cache
def _arrow_types() -> dict[str, pa.DataType]:
    return {
        "VARCHAR": pa.string(),
        "VARCHAR[]": pa.list_(pa.string()),
        "INTEGER": pa.int32(),
        "BIGINT": pa.int64(),
    }


def _table(rows: list[dict], name: str) -> pa.Table:
    """``rows`` with the columns the warehouse declares for table ``name``."""
    fields = []
    for column in SCHEMA[name].split(","):
        column_name, column_type = column.split()
        fields.append((column_name, _arrow_types()[column_type]))
    return pa.Table.from_pylist(rows, schema=pa.schema(fields))
