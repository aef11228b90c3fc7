"""The libraries a project reads, kept in ``libraries.json`` beside the collections folder (under
``data/``): each has a name, a kind (zotero, bibtex, csl) and a path. ``insight-assets library``
adds, lists and removes them; removing one forgets it and never touches the library itself."""

from __future__ import annotations

import functools
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from insight_assets.core.library.exports import read_bibtex, read_csl_json
from insight_assets.core.library.model import LibraryCollection, LibraryError, slug
from insight_assets.core.library.zotero import database_path, read_zotero

KINDS = ("zotero", "bibtex", "csl")


@dataclass(frozen=True)
class Library:
    """A library the project reads: ``path`` is Zotero's data directory, or the export file."""

    name: str
    kind: str
    path: str
    # Zotero's linked attachment base directory, for files linked relative to it.
    base_dir: str | None = None

    @property
    def watched_file(self) -> Path:
        """The file whose changes are the library's changes."""
        return database_path(Path(self.path)) if self.kind == "zotero" else Path(self.path)

    def collections(self) -> list[LibraryCollection]:
        """Its collections, read now (or from this process's last read of the same file state)."""
        try:
            stat = self.watched_file.stat()
        except OSError as error:
            raise LibraryError(
                f"library {self.name!r}: {self.watched_file} cannot be read ({error.strerror}). Move it back, "
                f"or forget the library: insight-assets library remove {self.name}"
            ) from error
        return _read(self, stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _read(library: Library, size: int, mtime_ns: int) -> list[LibraryCollection]:
    """One read per state of the library's file and process (size and mtime are part of the key)."""
    path = Path(library.path)
    if library.kind == "zotero":
        return read_zotero(path, library.name, Path(library.base_dir) if library.base_dir else None)
    if library.kind == "bibtex":
        return [read_bibtex(path, library.name)]
    return [read_csl_json(path, library.name)]


class LibraryRegistry:
    """``libraries.json``: read on each use, so that every process sees the same list."""

    def __init__(self, file: Path):
        self.file = Path(file)

    def libraries(self) -> list[Library]:
        if not self.file.is_file():
            return []
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
            return [Library(**entry) for entry in data.get("libraries", [])]
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
    ) -> Library:
        """Register a library; it is checked by reading it once, so a wrong path fails here."""
        if kind not in KINDS:
            raise LibraryError(f"Unknown library kind {kind!r}: use one of {', '.join(KINDS)}.")
        resolved = Path(path).expanduser().resolve()
        if not resolved.exists():
            raise LibraryError(f"No {kind} library at {resolved}: check the path.")
        if kind == "zotero" and resolved.is_file():
            resolved = resolved.parent
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
        library = Library(
            name=name, kind=kind, path=str(resolved), base_dir=str(base_dir) if base_dir else None
        )
        library.collections()
        self._write([*existing, library])
        return library

    def remove(self, name: str) -> Library:
        existing = self.libraries()
        found = next((library for library in existing if library.name == name), None)
        if found is None:
            known = ", ".join(library.name for library in existing) or "none"
            raise LibraryError(f"No library named {name!r} (libraries: {known}).")
        self._write([library for library in existing if library.name != name])
        return found

    def _write(self, libraries: list[Library]) -> None:
        self.file.parent.mkdir(parents=True, exist_ok=True)
        staged = self.file.with_suffix(".json.tmp")
        staged.write_text(
            json.dumps({"libraries": [asdict(library) for library in libraries]}, indent=2) + "\n"
        )
        os.replace(staged, self.file)


def _check_name(name: str) -> None:
    if slug(name) != name:
        raise LibraryError(
            f"Library name {name!r} is refused: use lower-case letters, digits and '-' (e.g. {slug(name)!r})."
        )
