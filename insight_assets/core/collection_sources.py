"""Where a collection's papers come from: a folder of PDFs under the collections root, or one
collection of a registered library (Zotero, BibTeX, CSL-JSON). Every source gives the same thing:
its papers (a PDF each, with the library's metadata and the reader's notes where there is a
library), the problems of the items it cannot use, and a cheap signature that changes when any of
that changes. No Dagster here: the sensor, the CLI and the MCP server all read sources this way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from insight_assets.core.ingestion.documents import sha256_text
from insight_assets.core.library import LibraryError, LibraryItem, LibraryProblem
from insight_assets.core.library.pdf_folder import pdfs_in
from insight_assets.core.library.registry import Library, LibraryRegistry

FOLDER = "folder"
# Files beside the PDFs that the methods read (questions, summary topics, research backgrounds).
SIDE_FILES = ("questions.jsonl", "summaries.jsonl", "backgrounds.jsonl")


class InvalidCollectionKey(ValueError):
    """A collection name that cannot name a folder under the collections root."""


def validate_collection_key(key: str) -> str:
    """Refuse names that could escape the collections root or name no folder."""
    problem = None
    if not key or not key.strip():
        problem = "it is empty"
    elif "/" in key or "\\" in key:
        problem = "it contains a path separator"
    elif key in {".", ".."} or ".." in key:
        problem = "it contains '..'"
    elif Path(key).is_absolute() or (len(key) > 1 and key[1] == ":"):
        problem = "it is an absolute path"
    elif key.startswith("."):
        problem = "it starts with '.' (hidden folders are not collections)"
    if problem:
        raise InvalidCollectionKey(
            f"Collection key {key!r} is refused: {problem}. A collection is the name of one folder "
            "directly under the collections root, e.g. 'scholarly-docs', or of a library's collection."
        )
    return key


@dataclass(frozen=True)
class Paper:
    """One PDF of a collection: ``file`` is its name within the collection (a folder's relative
    path; ``<item key>/<file name>`` for a library's item), ``item`` its library entry."""

    file: str
    path: Path
    item: LibraryItem | None = None


@dataclass
class SourceContents:
    papers: list[Paper] = field(default_factory=list)
    problems: list[LibraryProblem] = field(default_factory=list)


@dataclass(frozen=True)
class CollectionSource:
    """A collection: ``kind`` is ``folder`` or a library's kind; ``folder`` holds the PDFs of a
    folder collection and, for every collection, the optional side files (``questions.jsonl``...)."""

    name: str
    kind: str
    folder: Path
    library: Library | None = None

    @property
    def origin(self) -> str:
        """What a person would open to see the source."""
        return str(self.folder.resolve()) if self.library is None else self.library.path

    def contents(self) -> SourceContents:
        if self.library is None:
            pdfs = pdfs_in(self.folder)
            return SourceContents([Paper(p.relative_to(self.folder).as_posix(), p) for p in pdfs])
        collection = next((c for c in self.library.collections() if c.name == self.name), None)
        if collection is None:
            raise LibraryError(
                f"collection {self.name!r} is no longer in library {self.library.name!r} ({self.library.path}): "
                "it was renamed, moved to the trash or deleted there."
            )
        papers = [
            Paper(f"{item.key}/{item.pdf.name}", item.pdf, item) for item in collection.items if item.pdf
        ]
        return SourceContents(papers, list(collection.problems))

    def located(self, files: Iterable[str]) -> dict[str, Path]:
        """Where each of the collection's ``files`` (as ``contents`` names them) is now; a file no
        longer there is given its place in the folder, where parsing it says it is missing."""
        if self.library is None:
            return {file: self.folder / file for file in files}
        found = {paper.file: paper.path for paper in self.contents().papers}
        return {file: found.get(file, self.folder / file) for file in files}

    def holds_a_pdf(self) -> bool:
        if self.library is None:
            return any(path.is_file() and path.suffix.lower() == ".pdf" for path in self.folder.rglob("*"))
        return bool(self.contents().papers)

    def signature(self) -> str:
        """A cheap signature of everything a build reads from the source: its PDFs' names, sizes
        and modification times, the library's metadata and notes, its problems, the side files. No
        file is hashed."""
        contents = self.contents()
        parts = [repr(problem) for problem in contents.problems]
        for paper in contents.papers:
            stat = paper.path.stat()
            parts.append(f"{paper.file}:{stat.st_size}:{stat.st_mtime_ns}")
            if paper.item is not None:
                parts.append(paper.item.version)
                parts += [repr(note) for note in paper.item.notes]
        for name in SIDE_FILES:
            side = self.folder / name
            if side.is_file():
                parts.append(f"{name}:{side.stat().st_size}:{side.stat().st_mtime_ns}")
        return sha256_text("\x00".join(parts))[:16]


@dataclass
class Sources:
    """Every collection the project knows, and each library that could not be read (name -> why)."""

    collections: dict[str, CollectionSource] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)


def library_side_folder(collections_root: Path, name: str) -> Path:
    """Where a library collection's side files go: ``data/libraries/<name>/``."""
    return Path(collections_root).parent / "libraries" / name


def registry_for(collections_root: Path) -> LibraryRegistry:
    """The project's libraries: ``libraries.json`` beside the collections root (``data/``)."""
    return LibraryRegistry(Path(collections_root).parent / "libraries.json")


def find_sources(collections_root: str | Path) -> Sources:
    """The folders under the collections root, then every registered library's collections."""
    root = Path(collections_root)
    found = Sources()
    if root.is_dir():
        for path in sorted(root.iterdir()):
            try:
                if path.is_dir():
                    found.collections[validate_collection_key(path.name)] = CollectionSource(
                        path.name, FOLDER, path
                    )
            except InvalidCollectionKey:
                continue
    try:
        libraries = registry_for(root).libraries()
    except LibraryError as error:
        found.unreadable["libraries.json"] = str(error)
        return found
    for library in libraries:
        try:
            collections = library.collections()
        except LibraryError as error:
            found.unreadable[library.name] = str(error)
            continue
        for collection in collections:
            if collection.name in found.collections:
                found.unreadable[collection.name] = (
                    f"library {library.name!r}'s collection {collection.name!r} has the name of a folder "
                    "under the collections root; the folder is built. Rename one of them."
                )
                continue
            found.collections[collection.name] = CollectionSource(
                collection.name, library.kind, library_side_folder(root, collection.name), library
            )
    return found


def collection_source(collections_root: str | Path, key: str) -> CollectionSource:
    """The source of collection ``key``; a ``LibraryError`` says why there is none."""
    validate_collection_key(key)
    folder = Path(collections_root) / key
    if folder.is_dir():
        return CollectionSource(key, FOLDER, folder)
    sources = find_sources(collections_root)
    if key in sources.collections:
        return sources.collections[key]
    reasons = "; ".join(sources.unreadable.values())
    raise LibraryError(
        f"Collection {key!r} has no folder at {(Path(collections_root) / key).resolve()} and is no collection "
        f"of a registered library{f' ({reasons})' if reasons else ''}. Create the folder and put PDFs in it, "
        "add its library (insight-assets library add ...), or remove the partition."
    )
