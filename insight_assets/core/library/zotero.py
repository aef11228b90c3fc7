"""A local Zotero library (its data directory: ``zotero.sqlite`` and ``storage/``), read-only.

The database is read from a private snapshot at Zotero's last commit (``zotero_snapshot.py``): a
write Zotero has not committed is never read, and Zotero is neither blocked nor disturbed. Each
top-level collection, with the items of all its sub-collections, becomes a ``LibraryCollection``
named ``<library>-<slug of its name>``; the items in no collection form ``<library>-unfiled``; items
in the trash, and trashed collections (a trashed sub-collection's items too), are left out.

What is read (Zotero's schema, ``resource/schema/userdata.sql``): the collection tree, each regular
item's title, creators, date, venue and DOI, its first PDF attachment (a stored file under
``storage/<attachment key>/`` or a linked file), the annotations on that PDF (highlights,
underlines, notes, with their page labels) and the item's child notes.
"""

from __future__ import annotations

import html
import json
import re
import sqlite3
import tempfile
from collections import defaultdict
from pathlib import Path

from insight_assets.core.library.model import (
    LibraryCollection,
    LibraryError,
    LibraryItem,
    LibraryProblem,
    ReaderNote,
    item_label,
    normalized_doi,
    slug,
    year_of,
)
from insight_assets.core.library.names import formatted
from insight_assets.core.library.zotero_snapshot import open_snapshot

DATABASE = "zotero.sqlite"
# The userdata schema versions this reader was written against (Zotero 7 and 8's): older ones lack
# the annotation table; a newer one is read when it still has every column read here.
OLDEST_USERDATA_VERSION = 120
NEWEST_KNOWN_USERDATA_VERSION = 129
# Every column the reader queries, checked before reading so that a changed schema is one clear error.
REQUIRED_COLUMNS = {
    "items": {"itemID", "itemTypeID", "libraryID", "key", "dateModified"},
    "itemTypesCombined": {"itemTypeID", "typeName"},
    "fieldsCombined": {"fieldID", "fieldName"},
    "itemData": {"itemID", "fieldID", "valueID"},
    "itemDataValues": {"valueID", "value"},
    "creators": {"creatorID", "firstName", "lastName", "fieldMode"},
    "itemCreators": {"itemID", "creatorID", "orderIndex"},
    "collections": {"collectionID", "collectionName", "parentCollectionID", "libraryID", "key"},
    "collectionItems": {"collectionID", "itemID"},
    "itemAttachments": {"itemID", "parentItemID", "linkMode", "contentType", "path"},
    "itemAnnotations": {"itemID", "parentItemID", "type", "text", "comment", "pageLabel", "position"},
    "itemNotes": {"itemID", "parentItemID", "note"},
    "deletedItems": {"itemID"},
    "deletedCollections": {"collectionID"},
    "libraries": {"libraryID", "type"},
}
# itemAttachments.linkMode: files Zotero stores, and files it links to where they are.
_STORED_MODES = {0, 1}  # imported file, imported URL: storage/<key>/<name>
_LINKED_FILE = 2
_NOT_PAPERS = {"attachment", "note", "annotation"}
_VENUE_FIELDS = (
    "publicationTitle",
    "proceedingsTitle",
    "conferenceName",
    "bookTitle",
    "university",
    "publisher",
)
# itemAnnotations.type, as Zotero numbers them.
ANNOTATION_KINDS = {1: "highlight", 2: "note", 3: "image", 4: "ink", 5: "underline", 6: "text"}


def database_path(directory: Path) -> Path:
    """``zotero.sqlite`` in a Zotero data directory (or the file itself)."""
    directory = Path(directory).expanduser()
    return directory if directory.is_file() else directory / DATABASE


UNFILED = "unfiled"
_SQLITE_HEADER = b"SQLite format 3\x00"


def open_committed(path: Path, snapshot_dir: Path) -> sqlite3.Connection:
    """The database at Zotero's last commit, from a snapshot in ``snapshot_dir``."""
    if not path.is_file():
        raise LibraryError(
            f"No Zotero database at {path}: point at Zotero's data directory (the folder holding "
            f"{DATABASE} and storage/; Zotero's Settings > Advanced > Files and Folders shows it)."
        )
    with path.open("rb") as file:
        if file.read(len(_SQLITE_HEADER)) != _SQLITE_HEADER:
            raise LibraryError(f"{path} is not an SQLite database: is it Zotero's {DATABASE}?")
    return open_snapshot(path, snapshot_dir)


def check_schema(connection: sqlite3.Connection, path: Path) -> list[LibraryProblem]:
    """Refuse a database this reader does not know; a newer schema that still has every column
    read is accepted with a warning."""
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    version = None
    if "version" in tables:
        row = connection.execute("SELECT version FROM version WHERE schema = 'userdata'").fetchone()
        version = row[0] if row else None
    if version is None:
        raise LibraryError(
            f"{path} has no Zotero userdata schema version: it is not a Zotero database, or one too old "
            "to read. Open it once in Zotero 7 or newer, then add it again."
        )
    missing = sorted(
        f"{table}.{column}"
        for table, columns in REQUIRED_COLUMNS.items()
        for column in columns - _columns(connection, table, tables)
    )
    if version < OLDEST_USERDATA_VERSION or missing:
        raise LibraryError(
            f"{path} has Zotero schema version {version}, which this version of insight_assets cannot read "
            f"(it reads {OLDEST_USERDATA_VERSION} to {NEWEST_KNOWN_USERDATA_VERSION}"
            + (f"; missing: {', '.join(missing[:5])}" if missing else "")
            + "). Update Zotero (for an older database) or insight_assets (for a newer one)."
        )
    if version > NEWEST_KNOWN_USERDATA_VERSION:
        return [
            LibraryProblem(
                item=str(path),
                kind="newer-zotero-schema",
                message=(
                    f"Zotero schema version {version} is newer than the {NEWEST_KNOWN_USERDATA_VERSION} this "
                    "reader knows; it has every column read, so it was read as before."
                ),
                severity="warning",
            )
        ]
    return []


def _columns(connection: sqlite3.Connection, table: str, tables: set[str]) -> set[str]:
    if table not in tables:
        return set()
    return {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}


def read_zotero(
    directory: Path, library_name: str, base_dir: Path | None = None, snapshot_dir: Path | None = None
) -> list[LibraryCollection]:
    """Every top-level collection of the Zotero library in ``directory``, named
    ``<library_name>-<slug of its name>``, with its items (its sub-collections' included) and
    problems, then ``<library_name>-unfiled`` when some items are in no collection. The snapshot is
    kept in ``snapshot_dir`` (a temporary folder when None)."""
    path = database_path(directory)
    if snapshot_dir is None:
        with tempfile.TemporaryDirectory(prefix="zotero-snapshot-") as scratch:
            return read_zotero(directory, library_name, base_dir, Path(scratch))
    connection = open_committed(path, snapshot_dir)
    try:
        warnings = check_schema(connection, path)
        return _Reader(connection, path.parent, base_dir).collections(library_name, warnings)
    except sqlite3.DatabaseError as error:
        raise LibraryError(f"{path} could not be read as a Zotero database: {error}") from error
    finally:
        connection.close()


class _Reader:
    """One pass over an open database: every query is a few set-based SELECTs."""

    def __init__(self, connection: sqlite3.Connection, data_dir: Path, base_dir: Path | None):
        self.db = connection
        self.data_dir = data_dir
        self.base_dir = base_dir
        self.trashed = {row[0] for row in self.db.execute("SELECT itemID FROM deletedItems")}

    def collections(self, library_name: str, warnings: list[LibraryProblem]) -> list[LibraryCollection]:
        rows = self.db.execute(
            """SELECT collectionID, collectionName, parentCollectionID, libraryID, key FROM collections
               WHERE collectionID NOT IN (SELECT collectionID FROM deletedCollections)"""
        ).fetchall()
        by_id = {row["collectionID"]: row for row in rows}
        children = defaultdict(list)
        for row in rows:
            children[row["parentCollectionID"]].append(row["collectionID"])
        members = defaultdict(set)
        for row in self.db.execute("SELECT collectionID, itemID FROM collectionItems"):
            members[row[0]].add(row[1])
        found = []
        for collection_id, row in sorted(by_id.items()):
            if row["parentCollectionID"] is not None:  # read with its top-level collection
                continue
            tree = self._descendants(collection_id, children)
            item_ids = set()
            for member in tree:
                item_ids |= members[member]
            subcollections = sorted(" / ".join(self._path(member, by_id)[1:]) for member in tree[1:])
            name = f"{library_name}-{slug(row['collectionName'])}"
            if any(collection.name == name for collection in found):  # two top-level names, one slug
                name = f"{name}-{row['key'].lower()}"
            where = row["collectionName"] + (f" (with {', '.join(subcollections)})" if subcollections else "")
            found.append(self._collection(name, where, sorted(item_ids - self.trashed), warnings))
        unfiled = self._unfiled(set().union(*members.values()) if members else set())
        if unfiled:
            found.append(
                self._collection(f"{library_name}-{UNFILED}", "items in no collection", unfiled, warnings)
            )
        return found

    def _collection(
        self, name: str, path: str, item_ids: list[int], warnings: list[LibraryProblem]
    ) -> LibraryCollection:
        """A collection of ``item_ids``: those with a usable PDF, the others, and why."""
        items, problems = self.items(item_ids)
        return LibraryCollection(
            name=name,
            path=path,
            items=[item for item in items if item.pdf is not None],
            unattached=[item for item in items if item.pdf is None],
            problems=list(warnings) + problems,
        )

    def _unfiled(self, filed: set[int]) -> list[int]:
        """The library's papers that no collection holds: regular items, and PDFs standing alone
        (attachments without a parent), not in the trash."""
        rows = self.db.execute(
            """SELECT i.itemID, t.typeName, a.parentItemID FROM items i JOIN itemTypesCombined t USING (itemTypeID)
               LEFT JOIN itemAttachments a USING (itemID)
               WHERE t.typeName NOT IN ('note', 'annotation')"""
        ).fetchall()
        return sorted(
            row["itemID"]
            for row in rows
            if row["itemID"] not in filed
            and row["itemID"] not in self.trashed
            and (row["typeName"] != "attachment" or row["parentItemID"] is None)
        )

    @staticmethod
    def _path(collection_id: int, by_id: dict) -> list[str]:
        names = []
        current = collection_id
        while current is not None and current in by_id:
            names.insert(0, by_id[current]["collectionName"])
            current = by_id[current]["parentCollectionID"]
        return names

    @staticmethod
    def _descendants(collection_id: int, children: dict) -> list[int]:
        found, stack = [], [collection_id]
        while stack:
            current = stack.pop()
            found.append(current)
            stack.extend(children[current])
        return found

    def items(self, item_ids: list[int]) -> tuple[list[LibraryItem], list[LibraryProblem]]:
        """The papers among ``item_ids`` (a PDF each where they have a usable one) and the problems
        of those without."""
        if not item_ids:
            return [], []
        marks = ",".join("?" * len(item_ids))
        base = self.db.execute(
            f"""SELECT i.itemID, i.key, i.dateModified, i.libraryID, t.typeName, l.type AS libraryType
                FROM items i JOIN itemTypesCombined t USING (itemTypeID) JOIN libraries l USING (libraryID)
                WHERE i.itemID IN ({marks}) ORDER BY i.key""",
            item_ids,
        ).fetchall()
        fields = self._fields(item_ids)
        creators = self._creators(item_ids)
        items, problems = [], []
        for row in base:
            item_fields = fields[row["itemID"]]
            if row["typeName"] == "note" or row["typeName"] == "annotation":
                continue
            title = item_fields.get("title", "")
            label = item_label(row["key"], title)
            if row["typeName"] == "attachment":  # a PDF standing alone in the collection
                attachment = self.db.execute(
                    "SELECT i.itemID, i.key, a.linkMode, a.contentType, a.path FROM itemAttachments a "
                    "JOIN items i USING (itemID) WHERE a.itemID = ?",
                    [row["itemID"]],
                ).fetchall()
            else:
                attachment = self._attachments(row["itemID"])
            pdf, attachment_id, problem = self._pdf(attachment, label)
            if problem:
                problems.append(problem)
            items.append(
                LibraryItem(
                    key=row["key"],
                    title=title,
                    authors=tuple(creators[row["itemID"]]),
                    year=year_of(item_fields.get("date")),
                    venue=next((item_fields[name] for name in _VENUE_FIELDS if item_fields.get(name)), ""),
                    doi=normalized_doi(item_fields.get("DOI") or _extra_doi(item_fields.get("extra", ""))),
                    citekey=item_fields.get("citationKey") or _extra_citekey(item_fields.get("extra", "")),
                    link=self._link(row),
                    pdf=pdf,
                    matched_by="attachment" if pdf else "",
                    notes=tuple(self._annotations(attachment_id) + self._notes(row["itemID"])),
                    version=f"{row['dateModified']}|{json.dumps(item_fields, sort_keys=True)}",
                )
            )
        return items, problems

    def _fields(self, item_ids: list[int]) -> dict[int, dict[str, str]]:
        marks = ",".join("?" * len(item_ids))
        fields: dict[int, dict[str, str]] = defaultdict(dict)
        for row in self.db.execute(
            f"""SELECT d.itemID, f.fieldName, v.value FROM itemData d
                JOIN fieldsCombined f USING (fieldID) JOIN itemDataValues v USING (valueID)
                WHERE d.itemID IN ({marks})""",
            item_ids,
        ):
            fields[row["itemID"]][row["fieldName"]] = str(row["value"])
        return fields

    def _creators(self, item_ids: list[int]) -> dict[int, list[str]]:
        marks = ",".join("?" * len(item_ids))
        creators: dict[int, list[str]] = defaultdict(list)
        for row in self.db.execute(
            f"""SELECT ic.itemID, c.firstName, c.lastName, c.fieldMode FROM itemCreators ic
                JOIN creators c USING (creatorID) WHERE ic.itemID IN ({marks}) ORDER BY ic.itemID, ic.orderIndex""",
            item_ids,
        ):
            # fieldMode 1: one-field name (an organisation), kept whole in lastName.
            name = (
                (row["lastName"] or "").strip()
                if row["fieldMode"] == 1
                else formatted(row["lastName"] or "", row["firstName"] or "")
            )
            creators[row["itemID"]].append(name)
        return creators

    def _attachments(self, item_id: int) -> list[sqlite3.Row]:
        rows = self.db.execute(
            """SELECT i.itemID, i.key, a.linkMode, a.contentType, a.path FROM itemAttachments a
               JOIN items i USING (itemID) WHERE a.parentItemID = ? ORDER BY i.dateAdded, i.itemID""",
            [item_id],
        ).fetchall()
        return [row for row in rows if row["itemID"] not in self.trashed]

    def _pdf(
        self, attachments: list[sqlite3.Row], label: str
    ) -> tuple[Path | None, int | None, LibraryProblem | None]:
        """The item's first PDF attachment that exists, or the problem that says why there is none."""
        pdfs = [
            row
            for row in attachments
            if row["contentType"] == "application/pdf" or (row["path"] or "").lower().endswith(".pdf")
        ]
        if not pdfs:
            return (
                None,
                None,
                LibraryProblem(
                    label,
                    "no-pdf",
                    f"{label} has no PDF attachment in Zotero: attach the paper's PDF, or leave the item out.",
                ),
            )
        reasons = []
        for row in pdfs:
            path, reason = self._attachment_file(row)
            if path is not None:
                return path, row["itemID"], None
            reasons.append(reason)
        kind = (
            "linked-file-missing" if any("linked" in reason for reason in reasons) else "attachment-missing"
        )
        return None, None, LibraryProblem(label, kind, f"{label}: {reasons[0]}")

    def _attachment_file(self, row: sqlite3.Row) -> tuple[Path | None, str]:
        stored = row["path"] or ""
        if row["linkMode"] in _STORED_MODES and stored.startswith("storage:"):
            path = self.data_dir / "storage" / row["key"] / stored.removeprefix("storage:")
            if path.is_file():
                return path, ""
            return None, (
                f"its PDF is not in Zotero's storage ({path}): the file was never synced to this computer. "
                "Open the item in Zotero to download it, then build again."
            )
        if row["linkMode"] == _LINKED_FILE:
            if stored.startswith("attachments:"):
                if self.base_dir is None:
                    return None, (
                        f"its PDF is a linked file relative to Zotero's linked attachment base directory ({stored}), "
                        "which the database does not record: remove the library (insight-assets library remove NAME) and "
                        "add it again with --base-dir DIR (Zotero's Settings > Advanced > Files and Folders shows it)."
                    )
                path = self.base_dir / stored.removeprefix("attachments:")
            else:
                path = Path(stored)
            if path.is_file():
                return path, ""
            return None, f"its PDF is a linked file that no longer exists ({path}): relink it in Zotero."
        return None, "its PDF is a link to a web page, not a file: save the PDF to Zotero."

    def _annotations(self, attachment_id: int | None) -> list[ReaderNote]:
        if attachment_id is None:
            return []
        notes = []
        for row in self.db.execute(
            """SELECT a.itemID, i.key, a.type, a.text, a.comment, a.pageLabel, a.position, a.sortIndex
               FROM itemAnnotations a JOIN items i USING (itemID) WHERE a.parentItemID = ? ORDER BY a.sortIndex""",
            [attachment_id],
        ):
            if row["itemID"] in self.trashed or not (
                (row["text"] or "").strip() or (row["comment"] or "").strip()
            ):
                continue
            notes.append(
                ReaderNote(
                    note_id=row["key"],
                    kind=ANNOTATION_KINDS.get(row["type"], "annotation"),
                    text=(row["text"] or "").strip(),
                    comment=(row["comment"] or "").strip(),
                    page_label=row["pageLabel"] or "",
                    page=_page_of(row["position"]),
                )
            )
        return notes

    def _notes(self, item_id: int) -> list[ReaderNote]:
        notes = []
        for row in self.db.execute(
            "SELECT n.itemID, i.key, n.note FROM itemNotes n JOIN items i USING (itemID) WHERE n.parentItemID = ?",
            [item_id],
        ):
            text = _plain_text(row["note"] or "")
            if row["itemID"] not in self.trashed and text:
                notes.append(ReaderNote(note_id=row["key"], kind="note", text=text))
        return notes

    def _link(self, row: sqlite3.Row) -> str:
        if row["libraryType"] == "group":
            group = self.db.execute(
                "SELECT groupID FROM groups WHERE libraryID = ?", [row["libraryID"]]
            ).fetchone()
            if group:
                return f"zotero://select/groups/{group[0]}/items/{row['key']}"
        return f"zotero://select/library/items/{row['key']}"


def _page_of(position: str | None) -> int | None:
    """The 1-based PDF page of an annotation's position (Zotero stores a 0-based pageIndex)."""
    try:
        index = json.loads(position or "{}").get("pageIndex")
    except (ValueError, AttributeError):
        return None
    return index + 1 if isinstance(index, int) else None


def _plain_text(note_html: str) -> str:
    """A Zotero note's HTML as plain text."""
    text = re.sub(r"<(br|/p|/div|/h\d|/li)\s*/?>", "\n", note_html, flags=re.IGNORECASE)
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    return re.sub(r"\n\s*\n+", "\n", text).strip()


def _extra_doi(extra: str) -> str:
    found = re.search(r"^DOI:\s*(\S+)", extra, flags=re.MULTILINE | re.IGNORECASE)
    return found.group(1) if found else ""


def _extra_citekey(extra: str) -> str:
    """Better BibTeX pins a citekey in the Extra field as 'Citation Key: ...'."""
    found = re.search(r"^Citation Key:\s*(\S+)", extra, flags=re.MULTILINE | re.IGNORECASE)
    return found.group(1) if found else ""
