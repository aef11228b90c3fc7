"""Library exports kept current by a reference manager: a BibTeX file (as Better BibTeX writes it,
with each item's ``file`` paths) or a CSL-JSON file. The whole file is one collection.

BibTeX is parsed by ``bibtexparser`` 2.x; an entry it cannot parse is a problem row naming the
line, and the other entries are read. A PDF path that is relative is taken from the file's folder.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from insight_assets.core.library.model import (
    LibraryCollection,
    LibraryError,
    LibraryItem,
    LibraryProblem,
    item_label,
    normalized_doi,
    year_of,
)


def read_bibtex(path: Path, name: str) -> LibraryCollection:
    """The entries of a ``.bib`` file as one collection named ``name``."""
    import bibtexparser
    from bibtexparser.middlewares import LatexDecodingMiddleware, SeparateCoAuthors

    text = _read_text(path, "BibTeX")
    library = bibtexparser.parse_string(
        text, append_middleware=[LatexDecodingMiddleware(), SeparateCoAuthors()]
    )
    collection = LibraryCollection(name=name, path=str(path))
    for block in library.failed_blocks:
        first_line = (block.raw or "").strip().splitlines()[0][:80] if block.raw else ""
        line = (block.start_line or 0) + 1
        collection.problems.append(
            LibraryProblem(
                item=f"line {line}",
                kind="malformed-entry",
                message=(
                    f"{path.name}, line {line}: the entry '{first_line}' could not be read "
                    f"({block.error}). Fix it in your reference manager and export again."
                ),
            )
        )
    for entry in library.entries:
        fields = {field.key.lower(): field.value for field in entry.fields}
        authors = fields.get("author", [])
        item = LibraryItem(
            key=entry.key,
            citekey=entry.key,
            title=_plain(fields.get("title", "")),
            authors=tuple(
                _person(author) for author in (authors if isinstance(authors, list) else [authors])
            ),
            year=year_of(str(fields.get("year") or fields.get("date") or "")),
            venue=_plain(
                fields.get("journal") or fields.get("journaltitle") or fields.get("booktitle") or ""
            ),
            doi=normalized_doi(str(fields.get("doi", ""))),
            version=json.dumps(
                {key: str(value) for key, value in fields.items() if key != "file"}, sort_keys=True
            ),
        )
        _add_with_pdf(collection, item, bibtex_file_paths(str(fields.get("file", ""))), path.parent)
    return collection


def read_csl_json(path: Path, name: str) -> LibraryCollection:
    """The items of a CSL-JSON file as one collection named ``name``. CSL-JSON has no standard
    field for files: the PDF is read from ``file`` (paths separated by ';', as Better BibTeX
    writes them) or ``attachments`` (a list of paths or of objects with a ``path``)."""
    text = _read_text(path, "CSL-JSON")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise LibraryError(
            f"{path} is not JSON ({error.msg} at line {error.lineno}, column {error.colno}): export the "
            "library again as CSL JSON."
        ) from error
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        data = data["items"]
    if not isinstance(data, list):
        raise LibraryError(
            f"{path} holds JSON, but not a CSL-JSON list of items: export the library as CSL JSON."
        )
    collection = LibraryCollection(name=name, path=str(path))
    for position, record in enumerate(data, start=1):
        if not isinstance(record, dict) or not str(record.get("id") or "").strip():
            collection.problems.append(
                LibraryProblem(
                    item=f"item {position}",
                    kind="malformed-entry",
                    message=f"{path.name}: item {position} is not a CSL-JSON item with an id; it was left out.",
                )
            )
            continue
        item = LibraryItem(
            key=str(record["id"]),
            citekey=str(record.get("citation-key") or record["id"]),
            title=str(record.get("title") or ""),
            authors=tuple(
                _csl_name(person) for person in record.get("author") or [] if isinstance(person, dict)
            ),
            year=_csl_year(record.get("issued")),
            venue=str(record.get("container-title") or record.get("event") or ""),
            doi=normalized_doi(str(record.get("DOI") or "")),
            version=json.dumps(record, sort_keys=True, default=str),
        )
        _add_with_pdf(collection, item, _csl_paths(record), path.parent)
    return collection


def bibtex_file_paths(value: str) -> list[str]:
    """The paths in a BibTeX ``file`` field: Better BibTeX's ``a.pdf;b.pdf`` (``\\;`` escapes a
    ';') or JabRef's and Zotero's ``description:path:mime-type`` triples."""
    paths = []
    for part in re.split(r"(?<!\\);", value):
        part = part.strip().replace("\\;", ";").replace("\\:", ":")
        triple = re.fullmatch(r"[^:]*:(.+):[\w.+-]+/[\w.+-]+", part)
        if triple:
            part = triple.group(1)
        if part:
            paths.append(part)
    return paths


def _add_with_pdf(collection: LibraryCollection, item: LibraryItem, paths: list[str], base: Path) -> None:
    """Add ``item`` with its first PDF that exists, or record why it has none."""
    label = item_label(item.key, item.title)
    pdfs = [entry for entry in paths if entry.lower().endswith(".pdf")]
    if not pdfs:
        collection.problems.append(
            LibraryProblem(
                label, "no-pdf", f"{label} names no PDF file: attach the paper's PDF and export again."
            )
        )
        return
    for entry in pdfs:
        candidate = Path(entry).expanduser()
        candidate = candidate if candidate.is_absolute() else base / candidate
        if candidate.is_file():
            collection.items.append(dataclasses.replace(item, pdf=candidate))
            return
    collection.problems.append(
        LibraryProblem(
            label,
            "attachment-missing",
            f"{label}: its PDF {pdfs[0]} does not exist: relink the file in your reference manager and export again.",
        )
    )


def _read_text(path: Path, kind: str) -> str:
    if not path.is_file():
        raise LibraryError(f"No {kind} file at {path}: check the path, or export the library there again.")
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise LibraryError(f"{path} is not UTF-8 text ({error.reason}): export it again as UTF-8.") from error


def _plain(value) -> str:
    """A field's text without BibTeX's protective braces."""
    return re.sub(r"\s+", " ", str(value).replace("{", "").replace("}", "")).strip()


def _person(name: str) -> str:
    """'Last, First' as 'First Last'."""
    name = _plain(name)
    if "," in name:
        last, first = (part.strip() for part in name.split(",", 1))
        return f"{first} {last}".strip()
    return name


def _csl_name(person: dict) -> str:
    if person.get("literal"):
        return str(person["literal"])
    return f"{person.get('given', '')} {person.get('family', '')}".strip()


def _csl_year(issued) -> int | None:
    if isinstance(issued, dict):
        parts = issued.get("date-parts") or [[]]
        if parts and parts[0] and str(parts[0][0]).isdigit():
            return int(parts[0][0])
        return year_of(str(issued.get("raw") or issued.get("literal") or ""))
    return None


def _csl_paths(record: dict) -> list[str]:
    paths = []
    file_field = record.get("file")
    if isinstance(file_field, str):
        paths += bibtex_file_paths(file_field)
    elif isinstance(file_field, list):
        paths += [str(entry) for entry in file_field]
    for attachment in record.get("attachments") or []:
        if isinstance(attachment, str):
            paths.append(attachment)
        elif isinstance(attachment, dict) and attachment.get("path"):
            paths.append(str(attachment["path"]))
    return paths
