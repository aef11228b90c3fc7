"""A BibTeX or BibLaTeX file read as its producer meant it: JabRef, Mendeley, Zotero's own export,
Better BibTeX, or written by hand. The whole file is one collection.

``bibtexparser`` 2.x splits the file into entries (parse_stack empty: values stay as written); this
module then reads only the fields it uses:

- a value is its parts joined at ``#``: ``{...}`` and ``"..."`` literals, numbers, ``@string`` macros
  (and the month macros), as BibTeX joins them;
- ``crossref`` (and BibLaTeX's ``xdata``) fill what an entry lacks from its parent: every missing
  field, and the parent's ``title`` as the child's ``booktitle``;
- title, venue and names are LaTeX-decoded (``latex.py``); ``file`` never is (``file_fields.py``);
- names become ``Family, Given[, Suffix]`` with particles kept (``names.py``);
- a file that declares ``% Encoding: X`` (JabRef writes it) is read in X, else as UTF-8.

An entry the parser cannot read is a problem naming its line and the parser's reason; an entry
without a key is named by its line.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from insight_assets.core.library.attachments import attach_pdf, report_unclaimed
from insight_assets.core.library.file_fields import jabref_file_directories, linked_files
from insight_assets.core.library.latex import latex_to_text
from insight_assets.core.library.model import (
    LibraryCollection,
    LibraryError,
    LibraryItem,
    LibraryProblem,
    normalized_doi,
    year_of,
)
from insight_assets.core.library.names import bibtex_name
from insight_assets.core.library.pdf_folder import PdfFolder

_ENCODING = re.compile(r"\A(?:\ufeff)?(?:%[^\n]*\n)*?%\s*Encoding:\s*([\w.:-]+)", re.IGNORECASE)
_ENTRY = re.compile(r"@\s*[A-Za-z]+\s*[{(]")
_PARSER_LINE = re.compile(r"\(line (\d+)\)")
_MONTHS = dict(
    zip(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
        (
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ),
        strict=True,
    )
)
_PARENT_TITLE_AS_BOOKTITLE = {
    "proceedings",
    "book",
    "collection",
    "mvbook",
    "mvproceedings",
    "mvcollection",
    "reference",
}
_VENUE_FIELDS = ("journal", "journaltitle", "booktitle", "eventtitle", "publisher", "institution", "school")


def read_bibtex(path: Path, name: str, pdf_dir: Path | None = None) -> LibraryCollection:
    """The entries of a ``.bib`` file as one collection named ``name``; ``pdf_dir``: a folder of
    PDFs to match entries that name no file that exists (``pdf_folder.py``)."""
    text = _decoded(path)
    if not _ENTRY.search(text):
        hint = " (it looks like JSON: add it with `library add csl`)" if text.lstrip()[:1] in "[{" else ""
        raise LibraryError(f"{path} holds no BibTeX entry{hint}: export the library as BibTeX or BibLaTeX.")
    library, messages = _parse(text)
    collection = LibraryCollection(name=name, path=str(path))
    collection.problems += _unreadable(library, messages, path)
    strings: dict[str, str] = {}
    for string in library.strings:  # in order: a macro may use those defined before it
        strings[string.key.lower()] = _joined(str(string.value), strings)
    # Entries whose key an earlier one has (Mendeley writes both: several without a key, the same key
    # for two papers) are read too; the parser set them aside.
    duplicates = [block.ignore_error_block for block in library.failed_blocks if _is_duplicate(block)]
    read = [
        (entry, {field.key.lower(): str(field.value) for field in entry.fields})
        for entry in sorted([*library.entries, *duplicates], key=lambda entry: entry.start_line)
    ]
    entries: dict = {}
    for entry, fields in read:
        entries.setdefault(entry.key.lower(), (entry, fields))
    folders = [*jabref_file_directories(text, path.parent), path.parent]
    pdf_folder = PdfFolder(pdf_dir) if pdf_dir is not None else None
    seen: set[str] = set()
    for entry, own in read:
        fields = _inherited(own, entries)
        key = _key_of(entry, seen, collection, path)
        item = _item(key, fields, strings)
        files = linked_files(_joined(fields.get("file", ""), strings))
        attach_pdf(collection, item, files, folders, pdf_folder)
    report_unclaimed(collection, pdf_folder)
    return collection


def _decoded(path: Path) -> str:
    if not path.is_file():
        raise LibraryError(f"No BibTeX file at {path}: check the path, or export the library there again.")
    data = path.read_bytes()
    declared = _ENCODING.search(data[:2000].decode("ascii", errors="ignore"))
    encoding = declared.group(1) if declared else "utf-8-sig"
    try:
        return data.decode(encoding)
    except LookupError as error:
        raise LibraryError(
            f"{path} declares the encoding {encoding!r}, which is unknown: export it again as UTF-8."
        ) from error
    except UnicodeDecodeError as error:
        where = f"declares {encoding} but" if declared else "declares no encoding and"
        raise LibraryError(
            f"{path} {where} is not in it (byte {error.start}: {error.reason}): export it again as UTF-8."
        ) from error


@contextmanager
def _parser_messages() -> Iterator[list[str]]:
    """What bibtexparser logs while parsing, kept for the problems instead of reaching stderr."""
    messages: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(record.getMessage())

    logger = logging.getLogger("bibtexparser")
    handler, propagate = Keep(), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield messages
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _parse(text: str):
    import bibtexparser

    with _parser_messages() as messages:
        library = bibtexparser.parse_string(text, parse_stack=[])
    return library, messages


def _unreadable(library, messages: list[str], path: Path) -> list[LibraryProblem]:
    """A problem for each block the parser could not read: its line and the parser's reason."""
    reasons: dict[int, str] = {}
    for message in messages:
        found = _PARSER_LINE.search(message)
        if found:
            reasons[int(found.group(1))] = " ".join(message.split(":", 1)[-1].split())
    problems = []
    for block in library.failed_blocks:
        line = (block.start_line or 0) + 1
        first = (block.raw or "").strip().splitlines()[0][:80] if (block.raw or "").strip() else ""
        if _is_duplicate(block):
            continue  # read under a key of its own (``_key_of``)
        reason = reasons.get(line - 1) or reasons.get(line) or str(block.error) or type(block.error).__name__
        problems.append(
            LibraryProblem(
                item=f"line {line}",
                kind="malformed-entry",
                message=f"{path.name}, line {line}: the entry '{first}' could not be read ({reason}). "
                "Fix it in your reference manager and export again.",
            )
        )
    return problems


def _is_duplicate(block) -> bool:
    return type(block).__name__ == "DuplicateBlockKeyBlock" and block.ignore_error_block is not None


def _key_of(entry, seen: set[str], collection: LibraryCollection, path: Path) -> str:
    """The entry's key; an entry without one is named by its line (``line-12``), and one whose key
    an earlier entry has by both (``Smith2020-line-40``), with a warning."""
    line = entry.start_line + 1
    key = entry.key.strip()
    if not key:
        return f"line-{line}"
    if key.lower() not in seen:
        seen.add(key.lower())
        return key
    collection.problems.append(
        LibraryProblem(
            item=f"{key}-line-{line}",
            kind="duplicate-key",
            message=f"{path.name}, line {line}: the key {key!r} is taken by an earlier entry; this one is read as "
            f"{key}-line-{line}. Give it a key of its own in your reference manager.",
            severity="warning",
        )
    )
    return f"{key}-line-{line}"


def _inherited(fields: dict[str, str], entries: dict) -> dict[str, str]:
    """``fields`` with what its ``crossref`` and ``xdata`` parents give (one level, as BibTeX)."""
    parents = [fields.get("crossref", "")] + fields.get("xdata", "").split(",")
    merged = dict(fields)
    for parent_key in (key.strip().strip('{}"').lower() for key in parents):
        if not parent_key or parent_key not in entries:
            continue
        parent_entry, parent = entries[parent_key]
        for key, value in parent.items():
            merged.setdefault(key, value)
        book_like = parent_entry.entry_type.lower() in _PARENT_TITLE_AS_BOOKTITLE
        if book_like and "title" in parent and "booktitle" not in fields:
            merged["booktitle"] = parent["title"]
    return merged


def _joined(value: str, strings: dict[str, str]) -> str:
    """A raw value's parts joined at ``#``: literals kept, macros replaced."""
    parts, depth, quoted, current = [], 0, False, ""
    for char in value:
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == '"' and depth == 0:
            quoted = not quoted
        elif char == "#" and depth == 0 and not quoted:
            parts.append(current)
            current = ""
            continue
        current += char
    parts.append(current)
    return "".join(_part(part.strip(), strings) for part in parts)


def _part(part: str, strings: dict[str, str]) -> str:
    if len(part) >= 2 and (part[0], part[-1]) in {("{", "}"), ('"', '"')}:
        return part[1:-1]
    if part.isdigit():
        return part
    return strings.get(part.lower(), _MONTHS.get(part.lower(), part))


def _item(key: str, fields: dict[str, str], strings: dict[str, str]) -> LibraryItem:
    def field(name: str) -> str:
        return _joined(fields[name], strings) if name in fields else ""

    people = field("author") or field("editor")
    venue = next((field(name) for name in _VENUE_FIELDS if field(name)), "")
    return LibraryItem(
        key=key,
        citekey=key,
        title=latex_to_text(field("title")),
        authors=_people(people),
        year=year_of(field("year") or field("date")),
        venue=latex_to_text(venue),
        doi=normalized_doi(field("doi")),
        version=json.dumps({name: value for name, value in fields.items() if name != "file"}, sort_keys=True),
    )


def _people(value: str) -> tuple[str, ...]:
    from bibtexparser.middlewares.names import (
        InvalidNameError,
        parse_single_name_into_parts,
        split_multiple_persons_names,
    )

    found = []
    for person in split_multiple_persons_names(value) if value.strip() else []:
        try:
            found.append(bibtex_name(parse_single_name_into_parts(person, strict=False)))
        except InvalidNameError:  # unbalanced braces, a stray comma: keep the name as written
            found.append(latex_to_text(person))
    return tuple(name for name in found if name)
