"""The records that flow from PDF files to chunks.

Plain dataclasses, shared by the parser (``pdf.py``), the chunker (``chunking.py``) and the
stores, so that every stage agrees on identifiers and offsets.
"""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from insight_assets.core.ingestion.boilerplate import BoilerplateSpan, content_spans

if TYPE_CHECKING:
    from insight_assets.core.ingestion.text_quality import TextVerdict

PAGE_SEPARATOR = "\n\n"


def sha256_file(path: Path, block_size: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes, read in blocks so a huge file costs no memory."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(block_size):
            digest.update(block)
    return digest.hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ParseProblem:
    """Something wrong with one file.

    ``severity`` is ``"error"`` when the document could not be used at all, ``"warning"`` when it
    was kept with a caveat (blank pages, text recovered from a damaged stream).
    """

    kind: str
    message: str
    severity: str = "error"


@dataclass
class ParsedDocument:
    """One PDF's text in reading order, with the structure later methods need.

    ``text`` is the pages' text joined by ``PAGE_SEPARATOR``; ``page_offsets[i]`` is the character
    offset where page ``i + 1`` starts in ``text``. ``body_end`` is where the references block starts
    (``len(text)`` when none was found). ``boilerplate``: the body's acknowledgements, affiliations,
    copyright lines and the like (``boilerplate.py``), sorted; the chunker reads the body without them,
    and so does every method that reads a paper's text (``readable``).
    """

    doc_id: str
    file: str
    page_texts: list[str]
    title: str = ""
    abstract: str = ""
    sections: list[str] = field(default_factory=list)
    references: str = ""
    body_end: int | None = None
    boilerplate: list[BoilerplateSpan] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.text = PAGE_SEPARATOR.join(self.page_texts)
        offsets, position = [], 0
        for page_text in self.page_texts:
            offsets.append(position)
            position += len(page_text) + len(PAGE_SEPARATOR)
        self.page_offsets = offsets
        if self.body_end is None:
            self.body_end = len(self.text)

    @property
    def page_count(self) -> int:
        return len(self.page_texts)

    @property
    def body(self) -> str:
        return self.text[: self.body_end]

    @property
    def content_spans(self) -> list[tuple[int, int]]:
        """The body's spans between its boilerplate spans."""
        return content_spans(self.body_end, self.boilerplate)

    def readable(self, start: int = 0, end: int | None = None) -> str:
        """``text[start:end]`` (by default the body) without its boilerplate: the pieces between
        boilerplate spans, one per line."""
        end = self.body_end if end is None else end
        pieces = [
            self.text[max(a, start) : min(b, end)] for a, b in self.content_spans if b > start and a < end
        ]
        if end > self.body_end:
            pieces.append(self.text[max(start, self.body_end) : end])
        return "\n".join(piece.strip() for piece in pieces if piece.strip())

    def page_at(self, char_offset: int) -> int:
        """The 1-based page number holding ``char_offset`` in ``text``."""
        return max(1, bisect.bisect_right(self.page_offsets, char_offset))


@dataclass
class ParseResult:
    """The outcome for one file: a document (or ``None``), any problems found, and the text-quality
    gate's measures and verdict (``None`` when no page could be read)."""

    file: str
    doc_id: str
    size_bytes: int
    document: ParsedDocument | None
    problems: list[ParseProblem] = field(default_factory=list)
    quality: TextVerdict | None = None

    @property
    def ok(self) -> bool:
        return self.document is not None


@dataclass(frozen=True)
class Chunk:
    """A span of one document's body, sized for a chunk profile.

    ``text == document.text[char_start:char_end]``; ``chunk_id`` is a content hash of the document,
    the profile and the span, so it is stable across runs and unique within a collection.
    """

    chunk_id: str
    doc_id: str
    profile: str
    index: int
    text: str
    char_start: int
    char_end: int
    page_start: int
    page_end: int
    token_count: int

    @property
    def text_sha(self) -> str:
        return sha256_text(self.text)
