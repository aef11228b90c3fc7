"""A real Zotero data directory for tests: ``zotero.sqlite`` created from Zotero's own schema
(``data/zotero_schema``), with ``storage/<key>/`` folders, filled as Zotero fills it. Tests then
change it as a person using Zotero would (add, trash, edit, annotate) through plain SQL."""

from __future__ import annotations

import itertools
import json
import shutil
import sqlite3
from pathlib import Path

SCHEMA = Path(__file__).parent / "data" / "zotero_schema"
# What Zotero inserts from its global schema at start-up, by name (the ids are this builder's).
ITEM_TYPES = ("journalArticle", "conferencePaper", "attachment", "note", "annotation")
FIELDS = ("title", "date", "DOI", "publicationTitle", "proceedingsTitle", "extra", "url")
IMPORTED_FILE, LINKED_FILE, LINKED_URL = 0, 2, 3
HIGHLIGHT, NOTE_ANNOTATION = 1, 2


class ZoteroLibrary:
    """A Zotero data directory under ``root``; every method writes through one connection and
    commits, as Zotero would."""

    def __init__(self, root: Path, version: int | None = None):
        self.root = Path(root)
        (self.root / "storage").mkdir(parents=True, exist_ok=True)
        self.path = self.root / "zotero.sqlite"
        self.db = sqlite3.connect(self.path)
        scripts = {
            name: (SCHEMA / f"{name}.sql").read_text(encoding="utf-8") for name in ("system", "userdata")
        }
        for script in scripts.values():
            self.db.executescript(script)
        # Each file's first line is its version ("-- 129"), which Zotero records in `version`.
        for name, script in scripts.items():
            schema_version = int(script.splitlines()[0].removeprefix("--").strip())
            if name == "userdata" and version is not None:
                schema_version = version
            self.db.execute("INSERT INTO version (schema, version) VALUES (?, ?)", [name, schema_version])
        self.db.execute(
            "INSERT INTO libraries (libraryID, type, editable, filesEditable) VALUES (1, 'user', 1, 1)"
        )
        for type_id, name in enumerate(ITEM_TYPES, start=1):
            self.db.execute("INSERT INTO itemTypes (itemTypeID, typeName) VALUES (?, ?)", [type_id, name])
            self.db.execute(
                "INSERT INTO itemTypesCombined (itemTypeID, typeName, custom) VALUES (?, ?, 0)",
                [type_id, name],
            )
        for field_id, name in enumerate(FIELDS, start=1):
            self.db.execute("INSERT INTO fields (fieldID, fieldName) VALUES (?, ?)", [field_id, name])
            self.db.execute(
                "INSERT INTO fieldsCombined (fieldID, fieldName, custom) VALUES (?, ?, 0)", [field_id, name]
            )
        self.db.execute("INSERT INTO creatorTypes (creatorTypeID, creatorType) VALUES (1, 'author')")
        self.db.commit()
        self._keys = (f"K{n:07d}" for n in itertools.count(1))

    # -- collections and items ----------------------------------------------------------------

    def collection(self, name: str, parent: int | None = None) -> int:
        cursor = self.db.execute(
            "INSERT INTO collections (collectionName, parentCollectionID, libraryID, key) VALUES (?, ?, 1, ?)",
            [name, parent, next(self._keys)],
        )
        self.db.commit()
        return cursor.lastrowid

    def item(
        self,
        collections: list[int],
        *,
        title: str,
        authors: list[tuple[str, str]] = (),
        date: str = "",
        doi: str = "",
        venue: str = "",
        extra: str = "",
        item_type: str = "conferencePaper",
    ) -> tuple[int, str]:
        """A regular item in ``collections``: its id and key."""
        item_id, key = self._new_item(item_type)
        fields = {"title": title, "date": date, "DOI": doi, "proceedingsTitle": venue, "extra": extra}
        for field, value in fields.items():
            if value:
                self.set_field(item_id, field, value, commit=False)
        for position, (first, last) in enumerate(authors):
            self.db.execute(
                "INSERT OR IGNORE INTO creators (firstName, lastName, fieldMode) VALUES (?, ?, 0)",
                [first, last],
            )
            (creator_id,) = self.db.execute(
                "SELECT creatorID FROM creators WHERE firstName = ? AND lastName = ?", [first, last]
            ).fetchone()
            self.db.execute(
                "INSERT INTO itemCreators (itemID, creatorID, creatorTypeID, orderIndex) VALUES (?, ?, 1, ?)",
                [item_id, creator_id, position],
            )
        for collection_id in collections:
            self.db.execute(
                "INSERT INTO collectionItems (collectionID, itemID) VALUES (?, ?)", [collection_id, item_id]
            )
        self.db.commit()
        return item_id, key

    def stored_pdf(self, parent: int, pdf: Path, name: str | None = None) -> tuple[int, str]:
        """A PDF Zotero keeps itself: copied to ``storage/<attachment key>/``."""
        item_id, key = self._new_item("attachment")
        folder = self.root / "storage" / key
        folder.mkdir()
        file_name = name or pdf.name
        shutil.copyfile(pdf, folder / file_name)
        self._attachment(item_id, parent, IMPORTED_FILE, f"storage:{file_name}")
        return item_id, key

    def linked_pdf(self, parent: int, pdf: Path) -> tuple[int, str]:
        """A PDF Zotero links to where it is (an absolute path)."""
        item_id, key = self._new_item("attachment")
        self._attachment(item_id, parent, LINKED_FILE, str(pdf))
        return item_id, key

    def base_relative_pdf(self, parent: int, relative: str) -> tuple[int, str]:
        """A PDF linked relative to Zotero's linked attachment base directory ("attachments:...")."""
        item_id, key = self._new_item("attachment")
        self._attachment(item_id, parent, LINKED_FILE, f"attachments:{relative}")
        return item_id, key

    def web_link(self, parent: int, url: str) -> tuple[int, str]:
        item_id, key = self._new_item("attachment")
        self.db.execute(
            "INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path) VALUES (?, ?, ?, 'text/html', ?)",
            [item_id, parent, LINKED_URL, url],
        )
        self.db.commit()
        return item_id, key

    def highlight(
        self, attachment: int, text: str, *, page_index: int, page_label: str, comment: str = ""
    ) -> str:
        """A highlight made in Zotero's reader on ``attachment``'s page ``page_index`` (0-based)."""
        item_id, key = self._new_item("annotation")
        position = json.dumps({"pageIndex": page_index, "rects": [[10, 10, 200, 30]]})
        self.db.execute(
            """INSERT INTO itemAnnotations (itemID, parentItemID, type, authorName, text, comment, color,
                                            pageLabel, sortIndex, position, isExternal)
               VALUES (?, ?, ?, '', ?, ?, '#ffd400', ?, ?, ?, 0)""",
            [
                item_id,
                attachment,
                HIGHLIGHT,
                text,
                comment,
                page_label,
                f"{page_index:05d}|000000|00000",
                position,
            ],
        )
        self.db.commit()
        return key

    def note(self, parent: int, html: str) -> str:
        item_id, key = self._new_item("note")
        self.db.execute(
            "INSERT INTO itemNotes (itemID, parentItemID, note, title) VALUES (?, ?, ?, '')",
            [item_id, parent, html],
        )
        self.db.commit()
        return key

    # -- what a person does later ---------------------------------------------------------------

    def set_field(self, item_id: int, field: str, value: str, *, commit: bool = True) -> None:
        self.db.execute("INSERT OR IGNORE INTO itemDataValues (value) VALUES (?)", [value])
        (value_id,) = self.db.execute(
            "SELECT valueID FROM itemDataValues WHERE value = ?", [value]
        ).fetchone()
        (field_id,) = self.db.execute(
            "SELECT fieldID FROM fieldsCombined WHERE fieldName = ?", [field]
        ).fetchone()
        self.db.execute(
            "INSERT OR REPLACE INTO itemData (itemID, fieldID, valueID) VALUES (?, ?, ?)",
            [item_id, field_id, value_id],
        )
        self.db.execute(
            "UPDATE items SET dateModified = datetime('now', '+' || (SELECT count(*) FROM itemData) || ' seconds') WHERE itemID = ?",
            [item_id],
        )
        if commit:
            self.db.commit()

    def trash(self, item_id: int) -> None:
        self.db.execute("INSERT INTO deletedItems (itemID) VALUES (?)", [item_id])
        self.db.commit()

    def add_to(self, collection_id: int, item_id: int) -> None:
        self.db.execute(
            "INSERT INTO collectionItems (collectionID, itemID) VALUES (?, ?)", [collection_id, item_id]
        )
        self.db.commit()

    def remove_from(self, collection_id: int, item_id: int) -> None:
        self.db.execute(
            "DELETE FROM collectionItems WHERE collectionID = ? AND itemID = ?", [collection_id, item_id]
        )
        self.db.commit()

    def close(self) -> None:
        self.db.close()

    def _new_item(self, item_type: str) -> tuple[int, str]:
        (type_id,) = self.db.execute(
            "SELECT itemTypeID FROM itemTypesCombined WHERE typeName = ?", [item_type]
        ).fetchone()
        key = next(self._keys)
        cursor = self.db.execute(
            "INSERT INTO items (itemTypeID, libraryID, key) VALUES (?, 1, ?)", [type_id, key]
        )
        return cursor.lastrowid, key

    def _attachment(self, item_id: int, parent: int, link_mode: int, path: str) -> None:
        self.db.execute(
            "INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path) VALUES (?, ?, ?, 'application/pdf', ?)",
            [item_id, parent, link_mode, path],
        )
        self.db.commit()


# The demo papers (data/collections/scholarly-docs) as a Zotero library would hold them.
DEMO_ITEMS = {
    "specter": (
        "2020.acl-main.207_specter.pdf",
        "SPECTER: Document-level Representation Learning using Citation-informed Transformers",
        [
            ("Arman", "Cohan"),
            ("Sergey", "Feldman"),
            ("Iz", "Beltagy"),
            ("Doug", "Downey"),
            ("Daniel S.", "Weld"),
        ],
        "2020-07",
        "10.18653/v1/2020.acl-main.207",
    ),
    "s2orc": (
        "2020.acl-main.447_s2orc.pdf",
        "S2ORC: The Semantic Scholar Open Research Corpus",
        [
            ("Kyle", "Lo"),
            ("Lucy Lu", "Wang"),
            ("Mark", "Neumann"),
            ("Rodney", "Kinney"),
            ("Daniel S.", "Weld"),
        ],
        "2020-07",
        "10.18653/v1/2020.acl-main.447",
    ),
    "literature-graph": (
        "N18-3011_literature-graph-semantic-scholar.pdf",
        "Construction of the Literature Graph in Semantic Scholar",
        [("Waleed", "Ammar")],
        "2018-06",
        "10.18653/v1/N18-3011",
    ),
    "longeval": (
        "2023.eacl-main.121_longeval.pdf",
        "LongEval: Guidelines for Human Evaluation of Faithfulness in Long-form Summarization",
        [("Kalpesh", "Krishna"), ("Erin", "Bransom"), ("Kyle", "Lo")],
        "2023-05",
        "10.18653/v1/2023.eacl-main.121",
    ),
    "papermage": (
        "papermage.pdf",
        "PaperMage: A Unified Toolkit for Processing, Representing, and Manipulating Visually-Rich Scientific Documents",
        [("Kyle", "Lo"), ("Zejiang", "Shen")],
        "2023-12",
        "10.18653/v1/2023.emnlp-demo.45",
    ),
}


def demo_library(root: Path, papers: Path) -> tuple[ZoteroLibrary, dict]:
    """A Zotero library over the demo papers in ``papers``, with every case the reader handles:

    - "Embeddings" (SPECTER and S2ORC, stored in storage/; SPECTER with a highlight, an annotation
      comment and a child note; a trashed item) with the sub-collection "Citation graphs" (the
      literature-graph paper as a linked file outside storage/);
    - "Evaluation" (LongEval and PaperMage; PaperMage's title in Zotero differs from its PDF's;
      an item with only a web link, one whose stored PDF was never synced, one whose linked file
      was moved away).

    Returns the library and the ids: ``{name: (item id, item key, attachment id)}`` plus the
    collections' ids under ``"collections"``.
    """
    library = ZoteroLibrary(root / "Zotero")
    embeddings = library.collection("Embeddings")
    graphs = library.collection("Citation graphs", parent=embeddings)
    evaluation = library.collection("Evaluation")
    ids: dict = {"collections": {"embeddings": embeddings, "graphs": graphs, "evaluation": evaluation}}
    homes = {
        "specter": embeddings,
        "s2orc": embeddings,
        "literature-graph": graphs,
        "longeval": evaluation,
        "papermage": evaluation,
    }
    elsewhere = root / "elsewhere"
    elsewhere.mkdir(parents=True, exist_ok=True)
    for name, (file, title, authors, date, doi) in DEMO_ITEMS.items():
        if name == "papermage":
            title = "PaperMage: a toolkit for visually-rich scientific documents"  # not the PDF's
        extra = "Citation Key: cohan2020specter" if name == "specter" else ""
        item_id, key = library.item(
            [homes[name]],
            title=title,
            authors=authors,
            date=date,
            doi=doi,
            venue="Proceedings of ACL",
            extra=extra,
        )
        if name == "literature-graph":
            linked = elsewhere / file
            shutil.copyfile(papers / file, linked)
            attachment, _ = library.linked_pdf(item_id, linked)
        else:
            attachment, _ = library.stored_pdf(item_id, papers / file)
        ids[name] = (item_id, key, attachment)
    specter_attachment = ids["specter"][2]
    library.highlight(
        specter_attachment,
        "citation-informed transformers learn document-level embeddings",
        page_index=0,
        page_label="1",
        comment="the core idea: citations as a training signal",
    )
    library.highlight(
        specter_attachment, "", page_index=3, page_label="4", comment="compare with SciNCL's sampling"
    )
    library.note(ids["specter"][0], "<p>Read for the <b>related work</b> section.</p>")
    trashed, _ = library.item([embeddings], title="A trashed draft", authors=[("Ann", "Other")])
    library.stored_pdf(trashed, papers / DEMO_ITEMS["s2orc"][0], name="draft.pdf")
    library.trash(trashed)
    ids["trashed"] = (trashed,)
    web_only, _ = library.item([evaluation], title="A paper only linked on the web")
    library.web_link(web_only, "https://example.org/paper")
    never_synced, _ = library.item([evaluation], title="A paper never synced")
    _, key = library.stored_pdf(never_synced, papers / DEMO_ITEMS["longeval"][0], name="never.pdf")
    shutil.rmtree(library.root / "storage" / key)
    moved, _ = library.item([evaluation], title="A paper whose file moved")
    library.linked_pdf(moved, elsewhere / "moved-away.pdf")
    return library, ids
