"""Passages as the MCP tools give them, so that an assistant can follow a citation to its words.

Every passage has a stable id, ``<collection>/<chunk id>`` (the chunk id hashes the paper, the span
and the text, so it names the same words until the paper or the chunking changes), that ``fetch``
reads back whole with its neighbours; its quoted span; its paper's title, citekey or DOI and pages;
and a link: the DOI's address where the library gives one, else the PDF itself opened at the page
(``file:///...pdf#page=4``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SEPARATOR = "/"  # a collection's name never holds one (validate_collection_key)


def passage_id(collection: str, chunk_id: str) -> str:
    return f"{collection}{SEPARATOR}{chunk_id}"


def split_passage_id(passage: str) -> tuple[str, str]:
    """``(collection, chunk id)`` of a passage id; ``ValueError`` with a sentence for anything else."""
    collection, separator, chunk_id = passage.strip().rpartition(SEPARATOR)
    if not separator or not collection or not chunk_id.isalnum():
        raise ValueError(
            f"{passage!r} is not a passage id: search and ask give them as '<collection>/<chunk id>'"
        )
    return collection, chunk_id


def quoted(text: str) -> str:
    """A passage's words as one line (the PDF's line breaks are layout, not meaning)."""
    return " ".join(text.split())


def pages_label(first: int, last: int) -> str:
    return f"p. {first}" if first == last else f"pp. {first}-{last}"


@dataclass
class Papers:
    """A collection's papers as citations name them: library metadata where there is a library
    entry, and where each PDF is on this machine."""

    collection: str
    rows: dict[str, dict] = field(default_factory=dict)  # doc_id -> its row of ``papers``
    pdfs: dict[str, Path] = field(default_factory=dict)  # doc_id -> the PDF's path

    @classmethod
    def load(cls, storage: Any, collection: str) -> Papers:
        from insight_assets.core.collection_sources import collection_source
        from insight_assets.core.library.model import LibraryError
        from insight_assets.core.papers import stored_papers

        rows = stored_papers(storage.warehouse, collection)
        try:
            where = collection_source(storage.collections_root, collection).located(
                row["file"] for row in rows.values()
            )
        except LibraryError:  # the library moved or lost the collection: cite without the files
            where = {}
        pdfs = {doc: where[row["file"]] for doc, row in rows.items() if row["file"] in where}
        return cls(collection, rows, pdfs)

    def cite(self, doc_id: str) -> str:
        from insight_assets.core.papers import citation_label

        return citation_label(self.rows.get(doc_id))

    def url(self, doc_id: str, page: int | None = None) -> str | None:
        """The DOI's address, else the PDF opened at ``page``, else None."""
        row = self.rows.get(doc_id) or {}
        if row.get("doi"):
            return f"https://doi.org/{row['doi']}"
        pdf = self.pdfs.get(doc_id)
        if pdf is None:
            return None
        return pdf.resolve().as_uri() + (f"#page={page}" if page else "")

    def paper(self, doc_id: str, title: str) -> dict[str, Any]:
        """The paper's metadata as ``fetch`` gives it."""
        row = self.rows.get(doc_id) or {}
        pdf = self.pdfs.get(doc_id)
        return {
            "doc_id": doc_id,
            "title": title,
            "authors": list(row.get("authors") or []),
            "year": row.get("year"),
            "venue": row.get("venue"),
            "doi": row.get("doi"),
            "citekey": row.get("citekey"),
            "cite": self.cite(doc_id),
            "library_link": row.get("link"),
            "pdf": str(pdf.resolve()) if pdf else None,
            "url": self.url(doc_id),
        }

    def passage(self, source: Any, score: float | None = None) -> dict[str, Any]:
        """A passage (a ``Hit`` or ``Source``: chunk and doc ids, title, pages, text) with its id,
        quote, citation and link."""
        cite = getattr(source, "cite", "") or self.cite(source.doc_id)
        pages = pages_label(source.page_start, source.page_end)
        found = {
            "id": passage_id(self.collection, source.chunk_id),
            "collection": self.collection,
            "title": source.title,
            "cite": cite,
            "pages": pages,
            "page_start": source.page_start,
            "page_end": source.page_end,
            "citation": f"{source.title}, {cite + ', ' if cite else ''}{pages}",
            "quote": quoted(source.text),
            "url": self.url(source.doc_id, source.page_start),
            "doc_id": source.doc_id,
        }
        if score is not None:
            found["score"] = round(score, 4)
        return found
