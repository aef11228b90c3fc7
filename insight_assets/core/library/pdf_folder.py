"""A folder of PDFs for a library whose entries name no file (``--pdfs DIR``): CSL-JSON exports
never carry attachments, and hand-written ``.bib`` files seldom have a ``file`` field.

Each item is matched to a PDF of the folder (its sub-folders included) by, in order:

1. ``citekey``: the file is named by the item's citekey or id (``vaswani2017.pdf``; case, spaces
   and punctuation aside);
2. ``doi``: the item's DOI is printed on the PDF's first two pages or in its metadata;
3. ``title``: the item's title is the PDF's own title (its metadata title when page 1 prints it,
   else page 1's largest-font lines), or is printed on page 1; compared as lower-case letters and
   digits only.

A PDF matches one item at most (the first that claims it). The PDFs' DOIs and titles are read
once, when an item first needs them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from insight_assets.core.library.model import LibraryItem, normalized_doi

CITEKEY, DOI, TITLE, FILE_FIELD = "citekey", "doi", "title", "file field"
_PAGES_READ = 2
_MIN_TITLE_CHARACTERS = 12  # a shorter title ("Attention") would be found on too many first pages


def pdfs_in(folder: Path) -> list[Path]:
    """The PDF files under ``folder`` (its sub-folders included), in path order."""
    return sorted(path for path in folder.rglob("*") if path.suffix.lower() == ".pdf" and path.is_file())


def _key(text: str) -> str:
    return "".join(char for char in text.lower() if char.isalnum())


@dataclass(frozen=True)
class _Printed:
    """What a PDF says about itself: the DOI it prints, its title, page 1's text."""

    doi: str
    title: str
    first_page: str


class PdfFolder:
    """The PDFs of ``folder`` and which of them items have claimed."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.pdfs = pdfs_in(folder)
        self._by_name: dict[str, list[Path]] = {}
        for path in self.pdfs:
            self._by_name.setdefault(_key(path.stem), []).append(path)
        self._printed: dict[Path, _Printed] | None = None
        self.claimed: set[Path] = set()

    def match(self, item: LibraryItem) -> tuple[Path, str] | None:
        """The item's PDF and the rule that found it, or None."""
        for name in dict.fromkeys(_key(name) for name in (item.citekey, item.key) if name):
            for path in self._by_name.get(name, ()):
                if path not in self.claimed:
                    return self._claim(path, CITEKEY)
        title = _key(item.title)
        if item.doi:
            for path, found in self._read().items():
                if path not in self.claimed and found.doi == item.doi:
                    return self._claim(path, DOI)
        if len(title) >= _MIN_TITLE_CHARACTERS:
            for path, found in self._read().items():
                if path not in self.claimed and (_key(found.title) == title or title in found.first_page):
                    return self._claim(path, TITLE)
        return None

    def unclaimed(self) -> list[Path]:
        return [path for path in self.pdfs if path not in self.claimed]

    def _claim(self, path: Path, rule: str) -> tuple[Path, str]:
        self.claimed.add(path)
        return path, rule

    def _read(self) -> dict[Path, _Printed]:
        if self._printed is None:
            self._printed = {path: _printed(path) for path in self.pdfs}
        return self._printed


def _printed(path: Path) -> _Printed:
    """The PDF's DOI, title and page-1 text; empty where it cannot be opened (the build says why)."""
    import pymupdf

    from insight_assets.core.ingestion.pdf.structure import largest_font_title, metadata_title

    try:
        with pymupdf.open(path) as document:
            if document.needs_pass or document.page_count == 0:
                return _Printed("", "", "")
            pages = [document[index].get_text() for index in range(min(_PAGES_READ, document.page_count))]
            metadata = document.metadata or {}
            first = document[0]
            title = metadata_title(metadata, pages[0]) or largest_font_title(first, first.get_textpage())
    except (RuntimeError, ValueError):  # pymupdf's errors for a damaged or not-a-PDF file
        return _Printed("", "", "")
    doi = normalized_doi(" ".join(pages)) or normalized_doi(
        " ".join(str(metadata.get(field) or "") for field in ("subject", "keywords"))
    )
    return _Printed(doi, title, _key(pages[0]))
