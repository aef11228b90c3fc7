"""The libraries a project reads, kept in ``libraries.json`` beside the collections folder (under
``data/``): each has a name, a kind (zotero, bibtex, csl), a path and, for an export whose entries
name no file, the folder of its PDFs. ``insight-assets library`` adds, shows, lists and removes them;
removing one forgets it and never touches the library itself.

A library is parsed again only when what it is read from changes (its file, Zotero's ``-wal`` and
``-journal``, the PDFs folder's listing) or the reader's code does: each parse is kept, across
processes, in ``data/cache/libraries/``, where Zotero's snapshot is taken too (``zotero_snapshot.py``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from insight_assets.core.library.bibtex import read_bibtex
from insight_assets.core.library.csl_json import read_csl_json
from insight_assets.core.library.model import (
    LibraryCollection,
    LibraryError,
    collections_from_json,
    collections_to_json,
    slug,
)
from insight_assets.core.library.pdf_folder import pdfs_in
from insight_assets.core.library.zotero import database_path, read_zotero
from insight_assets.core.library.zotero_snapshot import file_state, watched_paths

KINDS = ("zotero", "bibtex", "csl")


@dataclass(frozen=True)
class Library:
    """A library the project reads: ``path`` is Zotero's data directory, or the export file;
    ``pdf_dir`` the folder of an export's PDFs (``--pdfs``); ``cache_dir`` where its parses are
    kept (set by the registry, not stored)."""

    name: str
    kind: str
    path: str
    # Zotero's linked attachment base directory, for files linked relative to it.
    base_dir: str | None = None
    pdf_dir: str | None = None
    cache_dir: str | None = field(default=None, compare=False)

    @property
    def watched_file(self) -> Path:
        """The file whose changes are the library's changes."""
        return database_path(Path(self.path)) if self.kind == "zotero" else Path(self.path)

    def state(self) -> str:
        """What the library is read from, as it is now: sizes and times of its files (Zotero's
        WAL and journal included) and of its PDFs folder's PDFs."""
        watched = self.watched_file
        try:
            watched.stat()
        except OSError as error:
            where = "Zotero's data directory" if self.kind == "zotero" else "the export"
            raise LibraryError(
                f"library {self.name!r}: {watched} cannot be read ({error.strerror}). Put {where} back there, "
                f"or forget the library (insight-assets library remove {self.name}) and add it again "
                "from where it is now."
            ) from error
        paths = watched_paths(watched) if self.kind == "zotero" else [watched]
        parts = [repr(file_state(paths))]
        if self.pdf_dir:
            pdfs = pdfs_in(Path(self.pdf_dir))
            parts.append(repr([(str(path), file_state([path])) for path in pdfs]))
        return hashlib.sha256("\n".join([_reader_version(), *parts]).encode()).hexdigest()[:24]

    def collections(self) -> list[LibraryCollection]:
        """Its collections, as last parsed when nothing changed since, else read now."""
        return _read(self, self.state())

    def parse(self, snapshot_dir: Path | None = None) -> list[LibraryCollection]:
        """Its collections, read now."""
        path = Path(self.path)
        pdf_dir = Path(self.pdf_dir) if self.pdf_dir else None
        if self.kind == "zotero":
            return read_zotero(path, self.name, Path(self.base_dir) if self.base_dir else None, snapshot_dir)
        if self.kind == "bibtex":
            return [read_bibtex(path, self.name, pdf_dir)]
        return [read_csl_json(path, self.name, pdf_dir)]


@functools.lru_cache(maxsize=1)
def _reader_version() -> str:
    """The library readers' code: a change to it parses every library again."""
    digest = hashlib.sha256()
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


@functools.lru_cache(maxsize=64)
def _read(library: Library, state: str) -> list[LibraryCollection]:
    """One parse per state of the library, in this process and, through ``cache_dir``, across them."""
    if library.cache_dir is None:
        return library.parse()
    folder = Path(library.cache_dir)
    kept = folder / f"{library.name}.json"
    try:
        saved = json.loads(kept.read_text(encoding="utf-8"))
        if saved.get("state") == state:
            return collections_from_json(saved["collections"])
    except (OSError, ValueError, KeyError, TypeError):
        pass  # not parsed yet, or a cache this version cannot read: parse again
    folder.mkdir(parents=True, exist_ok=True)
    # A snapshot of its own for each read: the sensor and a build's steps may read at the same moment.
    with tempfile.TemporaryDirectory(prefix=f"{library.name}-snapshot-", dir=folder) as snapshot:
        collections = library.parse(Path(snapshot))
    staged = kept.with_suffix(f".{os.getpid()}.tmp")
    staged.write_text(json.dumps({"state": state, "collections": collections_to_json(collections)}))
    os.replace(staged, kept)
    return collections


class LibraryRegistry:
    """``libraries.json``: read on each use, so that every process sees the same list."""

    def __init__(self, file: Path):
        self.file = Path(file)
        self.cache_dir = self.file.parent / "cache" / "libraries"

    def libraries(self) -> list[Library]:
        if not self.file.is_file():
            return []
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
            return [Library(**entry, cache_dir=str(self.cache_dir)) for entry in data.get("libraries", [])]
        except (ValueError, TypeError, AttributeError) as error:
            raise LibraryError(
                f"{self.file} is not a list of libraries ({error}): fix it or delete it, then add the libraries again."
            ) from error

    def add(
        self,
        kind: str,
        path: str | Path,
        name: str | None,
        taken: set[str] = frozenset(),
        base_dir: str | Path | None = None,
        pdf_dir: str | Path | None = None,
    ) -> Library:
        """Register a library; it is checked by reading it once, so a wrong path fails here."""
        if kind not in KINDS:
            raise LibraryError(f"Unknown library kind {kind!r}: use one of {', '.join(KINDS)}.")
        resolved = Path(path).expanduser().resolve()
        if not resolved.exists():
            raise LibraryError(f"No {kind} library at {resolved}: check the path.")
        if kind == "zotero" and resolved.is_file():
            resolved = resolved.parent
        if kind == "zotero" and not database_path(resolved).is_file():
            raise LibraryError(
                f"No Zotero database in {resolved}: point at Zotero's data directory, the folder holding "
                "zotero.sqlite and storage/ (Zotero's Settings > Advanced > Files and Folders shows it)."
            )
        if kind != "zotero" and resolved.is_dir():
            raise LibraryError(f"{resolved} is a folder: give the {kind} export file itself.")
        name = name or (slug(resolved.name) if kind == "zotero" else "")
        if not name:
            raise LibraryError(
                f"A {kind} library needs a name: --name NAME (it becomes the collection's name)."
            )
        _check_name(name)
        existing = self.libraries()
        if any(library.name == name for library in existing) or name in taken:
            raise LibraryError(
                f"The name {name!r} is taken: pick another with --name, or remove the other first."
            )
        if base_dir is not None:
            if kind != "zotero":
                raise LibraryError(
                    "--base-dir is Zotero's linked attachment base directory: only for a zotero library."
                )
            base_dir = Path(base_dir).expanduser().resolve()
            if not base_dir.is_dir():
                raise LibraryError(
                    f"No folder at {base_dir}: --base-dir is Zotero's linked attachment base directory."
                )
        if pdf_dir is not None:
            if kind == "zotero":
                raise LibraryError(
                    "--pdfs is for exports whose entries name no file: Zotero's own attachments are read."
                )
            pdf_dir = Path(pdf_dir).expanduser().resolve()
            if not pdf_dir.is_dir():
                raise LibraryError(
                    f"No folder at {pdf_dir}: --pdfs DIR is the folder holding the library's PDFs."
                )
        library = Library(
            name=name,
            kind=kind,
            path=str(resolved),
            base_dir=str(base_dir) if base_dir else None,
            pdf_dir=str(pdf_dir) if pdf_dir else None,
            cache_dir=str(self.cache_dir),
        )
        library.collections()
        self._write([*existing, library])
        return library

    def named(self, name: str) -> Library:
        """The library called ``name``; a ``LibraryError`` lists the known ones when there is none."""
        existing = self.libraries()
        found = next((library for library in existing if library.name == name), None)
        if found is None:
            known = ", ".join(library.name for library in existing) or "none"
            raise LibraryError(f"No library named {name!r} (libraries: {known}).")
        return found

    def remove(self, name: str) -> Library:
        found = self.named(name)
        self._write([library for library in self.libraries() if library.name != name])
        return found

    def _write(self, libraries: list[Library]) -> None:
        self.file.parent.mkdir(parents=True, exist_ok=True)
        staged = self.file.with_suffix(".json.tmp")
        staged.write_text(
            json.dumps(
                {
                    "libraries": [
                        {key: value for key, value in asdict(library).items() if key != "cache_dir"}
                        for library in libraries
                    ]
                },
                indent=2,
            )
            + "\n"
        )
        os.replace(staged, self.file)


def _check_name(name: str) -> None:
    if slug(name) != name:
        raise LibraryError(
            f"Library name {name!r} is refused: use lower-case letters, digits and '-' (e.g. {slug(name)!r})."
        )
