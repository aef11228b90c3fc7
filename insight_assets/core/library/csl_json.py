"""A CSL-JSON export (Zotero's "CSL JSON", Better BibTeX's "Better CSL JSON", or any other
producer's) as one collection.

CSL-JSON has no field for files, and neither Zotero's nor Better BibTeX's export carries
attachments: the PDFs come from a folder given with ``--pdfs DIR`` (``pdf_folder.py``). A ``file``
(paths separated by ';', as Better BibTeX's BibTeX writes them) or ``attachments`` (paths, or
objects with a ``path``) field, which some producers add, is read first.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from insight_assets.core.library.attachments import attach_pdf, report_unclaimed
from insight_assets.core.library.file_fields import LinkedFile, linked_files
from insight_assets.core.library.model import (
    LibraryCollection,
    LibraryError,
    LibraryItem,
    LibraryProblem,
    normalized_doi,
    year_of,
)
from insight_assets.core.library.names import csl_name
from insight_assets.core.library.pdf_folder import PdfFolder

# CSL-JSON's rich-text markup in titles (``<i>``, ``<b>``, ``<sup>``, ``<span class="nocase">``).
_RICH_TEXT = re.compile(r"</?(?:i|b|sup|sub|sc|span)\b[^>]*>")


def read_csl_json(path: Path, name: str, pdf_dir: Path | None = None) -> LibraryCollection:
    """The items of a CSL-JSON file as one collection named ``name``; ``pdf_dir``: the folder of
    their PDFs."""
    data = _items(path)
    collection = LibraryCollection(name=name, path=str(path))
    pdf_folder = PdfFolder(pdf_dir) if pdf_dir is not None else None
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
            title=_RICH_TEXT.sub("", str(record.get("title") or "")),
            authors=tuple(
                csl_name(person) for person in record.get("author") or [] if isinstance(person, dict)
            ),
            year=_csl_year(record.get("issued")),
            venue=str(
                record.get("container-title") or record.get("event-title") or record.get("event") or ""
            ),
            doi=normalized_doi(str(record.get("DOI") or "")),
            version=json.dumps(record, sort_keys=True, default=str),
        )
        attach_pdf(collection, item, _files(record), [path.parent], pdf_folder)
    report_unclaimed(collection, pdf_folder)
    return collection


def _items(path: Path) -> list:
    if not path.is_file():
        raise LibraryError(f"No CSL-JSON file at {path}: check the path, or export the library there again.")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise LibraryError(
            f"{path} is not UTF-8 text ({error.reason}): export it again as CSL JSON."
        ) from error
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        hint = (
            " (it looks like BibTeX: add it with `library add bibtex`)" if text.lstrip()[:1] in "@%" else ""
        )
        raise LibraryError(
            f"{path} is not JSON ({error.msg} at line {error.lineno}, column {error.colno}){hint}: export "
            "the library again as CSL JSON."
        ) from error
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        data = data["items"]
    if not isinstance(data, list):
        raise LibraryError(
            f"{path} holds JSON, but not a CSL-JSON list of items: export the library as CSL JSON."
        )
    return data


def _csl_year(issued) -> int | None:
    if isinstance(issued, dict):
        parts = issued.get("date-parts") or [[]]
        if parts and parts[0] and str(parts[0][0]).isdigit():
            return int(parts[0][0])
        return year_of(str(issued.get("raw") or issued.get("literal") or ""))
    return None


def _files(record: dict) -> list[LinkedFile]:
    files = []
    file_field = record.get("file")
    if isinstance(file_field, str):
        files += linked_files(file_field)
    elif isinstance(file_field, list):
        files += [LinkedFile(str(entry)) for entry in file_field]
    for attachment in record.get("attachments") or []:
        if isinstance(attachment, str):
            files.append(LinkedFile(attachment))
        elif isinstance(attachment, dict) and attachment.get("path"):
            files.append(LinkedFile(str(attachment["path"])))
    return files
