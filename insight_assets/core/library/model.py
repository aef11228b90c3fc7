"""The values a library reader returns: items with their metadata, PDF and notes; problems."""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from insight_assets.core.startup.lazy import lazy_regex


class LibraryError(Exception):
    """A library that cannot be read at all (missing, not a library, an unknown format): one
    sentence saying what is wrong and what to do."""


@dataclass(frozen=True)
class ReaderNote:
    """Something the reader wrote or marked in a paper: a highlight (``text``, with the reader's
    ``comment`` if any), an annotation's comment, or a note. ``page_label`` is the page as printed
    in the paper (Zotero's page label); ``page`` the PDF page (1-based) when the library knows it."""

    note_id: str
    kind: str
    text: str
    comment: str = ""
    page_label: str = ""
    page: int | None = None


@dataclass(frozen=True)
class LibraryItem:
    """One paper of a library. ``key`` is the library's own identifier (Zotero's item key, the
    BibTeX citekey, the CSL-JSON id); ``pdf`` its PDF file, when it has one that exists."""

    key: str
    title: str = ""
    authors: tuple[str, ...] = ()
    year: int | None = None
    venue: str = ""
    doi: str = ""
    citekey: str = ""
    link: str = ""
    pdf: Path | None = None
    notes: tuple[ReaderNote, ...] = ()
    # What decides the item's metadata: a change here re-writes metadata only.
    version: str = ""
    # How its PDF was found: "attachment" (Zotero's), "file field" (an export's entry names it), or
    # in a ``--pdfs`` folder by "citekey", "doi" or "title"; "" when it has none.
    matched_by: str = ""

    def metadata(self) -> dict:
        """The item's bibliographic fields, as stored in the ``papers`` table."""
        return {
            "item_key": self.key,
            "citekey": self.citekey or None,
            "title": self.title or None,
            "authors": list(self.authors),
            "year": self.year,
            "venue": self.venue or None,
            "doi": self.doi or None,
            "link": self.link or None,
            "matched_by": self.matched_by or None,
        }


@dataclass(frozen=True)
class LibraryProblem:
    """An item the collection cannot use, or uses with a caveat: ``item`` names it (key and title),
    ``message`` says what is wrong and what to do."""

    item: str
    kind: str
    message: str
    severity: str = "error"


@dataclass
class LibraryCollection:
    """One collection of a library: its name as a collection of this project, where it came
    from in the library (``path``), its items and problems."""

    name: str
    path: str
    items: list[LibraryItem] = field(default_factory=list)
    problems: list[LibraryProblem] = field(default_factory=list)
    # The items it holds without a usable PDF (``pdf`` None): their problems say why.
    unattached: list[LibraryItem] = field(default_factory=list)

    @property
    def every_item(self) -> list[LibraryItem]:
        """Its items, those with a PDF first."""
        return self.items + self.unattached


def slug(text: str) -> str:
    """``text`` as lower-case ASCII words joined by '-' (a collection name's part)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-") or "untitled"


_DOI = lazy_regex(r"10\.\d{4,9}/\S+", re.IGNORECASE)


def normalized_doi(text: str | None) -> str:
    """The DOI in ``text`` (a bare DOI, a doi.org URL or a line of Zotero's Extra field), lower-case
    and without trailing punctuation; '' when there is none."""
    found = _DOI.search(text or "")
    return found.group(0).rstrip(".,;)]}").lower() if found else ""


def year_of(date: str | None) -> int | None:
    """The year of a library date ('2020-07-05', 'July 2020', '2020')."""
    found = re.search(r"\b(1[5-9]\d\d|2\d\d\d)\b", date or "")
    return int(found.group(1)) if found else None


def item_label(key: str, title: str) -> str:
    """How a problem names an item: its key and the start of its title."""
    return f"{key} ({title[:60]})" if title else key


def collections_to_json(collections: list[LibraryCollection]) -> list[dict]:
    """``collections`` as JSON values (the parsed-library cache)."""

    def items(values: list[LibraryItem]) -> list[dict]:
        return [dataclasses.asdict(item) | {"pdf": str(item.pdf) if item.pdf else None} for item in values]

    return [
        {
            "name": collection.name,
            "path": collection.path,
            "items": items(collection.items),
            "unattached": items(collection.unattached),
            "problems": [dataclasses.asdict(problem) for problem in collection.problems],
        }
        for collection in collections
    ]


def collections_from_json(values: list[dict]) -> list[LibraryCollection]:
    """What ``collections_to_json`` wrote."""

    def items(values: list[dict]) -> list[LibraryItem]:
        return [
            LibraryItem(
                **(
                    item
                    | {
                        "authors": tuple(item["authors"]),
                        "pdf": Path(item["pdf"]) if item["pdf"] else None,
                        "notes": tuple(ReaderNote(**note) for note in item["notes"]),
                    }
                )
            )
            for item in values
        ]

    return [
        LibraryCollection(
            name=value["name"],
            path=value["path"],
            items=items(value["items"]),
            unattached=items(value["unattached"]),
            problems=[LibraryProblem(**problem) for problem in value["problems"]],
        )
        for value in values
    ]
