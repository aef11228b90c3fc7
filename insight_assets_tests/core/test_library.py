"""Libraries read as collections: a real zotero.sqlite made from Zotero's own schema, a BibTeX file
as Better BibTeX writes it, a CSL-JSON export; the registry; the collection sources."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest

from insight_assets.core.collection_sources import collection_source, find_sources, registry_for
from insight_assets.core.library import LibraryError
from insight_assets.core.library.bibtex import read_bibtex
from insight_assets.core.library.csl_json import read_csl_json
from insight_assets.core.library.zotero import NEWEST_KNOWN_USERDATA_VERSION, read_zotero
from insight_assets_tests.conftest import DEMO_COLLECTION
from insight_assets_tests.zotero_library import DEMO_ITEMS, ZoteroLibrary, demo_library


@pytest.fixture
def zotero(tmp_path):
    library, ids = demo_library(tmp_path, DEMO_COLLECTION)
    yield library, ids
    library.close()


def _by_name(collections):
    return {collection.name: collection for collection in collections}


def test_each_top_level_zotero_collection_is_a_collection_with_its_subcollections_items(zotero, tmp_path):
    found = _by_name(read_zotero(tmp_path / "Zotero", "mylib"))

    assert sorted(found) == ["mylib-embeddings", "mylib-evaluation"]
    embeddings = found["mylib-embeddings"]
    assert embeddings.path == "Embeddings (with Citation graphs)"
    titles = {item.title for item in embeddings.items}
    # The sub-collection's linked file is in; the trashed item is not.
    assert titles == {DEMO_ITEMS[name][1] for name in ("specter", "s2orc", "literature-graph")}
    assert not embeddings.problems


def test_a_zotero_item_carries_the_librarys_metadata_its_pdf_and_the_readers_notes(zotero, tmp_path):
    _library, ids = zotero
    _item_id, key, _ = ids["specter"]
    (specter,) = [
        item
        for item in _by_name(read_zotero(tmp_path / "Zotero", "mylib"))["mylib-embeddings"].items
        if item.key == key
    ]

    assert specter.authors[:2] == ("Cohan, Arman", "Feldman, Sergey")
    assert (specter.year, specter.doi, specter.citekey) == (
        2020,
        "10.18653/v1/2020.acl-main.207",
        "cohan2020specter",
    )
    assert specter.venue == "Proceedings of ACL"
    assert specter.link == f"zotero://select/library/items/{key}"
    # A stored file lives in storage/<attachment key>/.
    assert specter.pdf.parent.parent == tmp_path / "Zotero" / "storage" and specter.pdf.is_file()
    notes = {(note.kind, note.page_label, note.page): note for note in specter.notes}
    assert notes[("highlight", "1", 1)].comment == "the core idea: citations as a training signal"
    assert notes[("highlight", "4", 4)].text == "" and "SciNCL" in notes[("highlight", "4", 4)].comment
    assert notes[("note", "", None)].text == "Read for the related work section."


def test_items_without_a_usable_pdf_are_problems_naming_the_item_and_what_to_do(zotero, tmp_path):
    evaluation = _by_name(read_zotero(tmp_path / "Zotero", "mylib"))["mylib-evaluation"]

    problems = {problem.kind: problem for problem in evaluation.problems}
    assert set(problems) == {"no-pdf", "attachment-missing", "linked-file-missing"}
    assert "A paper only linked on the web" in problems["no-pdf"].item
    assert (
        "never synced" in problems["attachment-missing"].message
        and "download" in problems["attachment-missing"].message
    )
    assert (
        "moved-away.pdf" in problems["linked-file-missing"].message
        and "relink" in problems["linked-file-missing"].message
    )
    # The rest of the collection is read.
    assert len(evaluation.items) == 2


def test_zotero_is_read_while_zotero_holds_its_lock_and_never_written(zotero, tmp_path):
    database = tmp_path / "Zotero" / "zotero.sqlite"
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    zotero_itself = sqlite3.connect(database)
    zotero_itself.execute("BEGIN EXCLUSIVE")  # as a running Zotero holds it
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            sqlite3.connect(database, timeout=0.1).execute("SELECT count(*) FROM items").fetchone()
        found = _by_name(read_zotero(tmp_path / "Zotero", "mylib"))
    finally:
        zotero_itself.rollback()
        zotero_itself.close()
    assert len(found["mylib-embeddings"].items) == 3
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before
    assert not (tmp_path / "Zotero" / "zotero.sqlite-journal").exists()


def test_a_newer_zotero_schema_with_every_column_is_read_with_a_warning(tmp_path):
    library = ZoteroLibrary(tmp_path / "Zotero", version=NEWEST_KNOWN_USERDATA_VERSION + 5)
    collection = library.collection("Papers")
    item, _ = library.item([collection], title="A paper")
    library.stored_pdf(item, min(DEMO_COLLECTION.glob("*.pdf")))
    library.close()

    (papers,) = read_zotero(tmp_path / "Zotero", "lib")
    assert len(papers.items) == 1
    assert [(p.kind, p.severity) for p in papers.problems] == [("newer-zotero-schema", "warning")]


def test_an_unknown_zotero_schema_is_refused_in_one_sentence(tmp_path):
    library = ZoteroLibrary(tmp_path / "old", version=90)
    library.close()
    with pytest.raises(LibraryError, match="schema version 90.*cannot read.*Update Zotero"):
        read_zotero(tmp_path / "old", "lib")

    changed = ZoteroLibrary(tmp_path / "changed", version=NEWEST_KNOWN_USERDATA_VERSION + 1)
    changed.db.execute("DROP TABLE itemAnnotations")
    changed.db.commit()
    changed.close()
    with pytest.raises(LibraryError, match="missing: itemAnnotations"):
        read_zotero(tmp_path / "changed", "lib")

    (tmp_path / "nozotero").mkdir()
    sqlite3.connect(tmp_path / "nozotero" / "zotero.sqlite").execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(LibraryError, match="no Zotero userdata schema version"):
        read_zotero(tmp_path / "nozotero", "lib")

    (tmp_path / "garbage").mkdir()
    (tmp_path / "garbage" / "zotero.sqlite").write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(LibraryError, match="not an SQLite database"):
        read_zotero(tmp_path / "garbage", "lib")

    with pytest.raises(LibraryError, match="No Zotero database at .*data directory"):
        read_zotero(tmp_path / "nowhere", "lib")


BETTER_BIBTEX = """
@inproceedings{cohan2020specter,
  title = {{SPECTER}: Document-level Representation Learning using Citation-informed Transformers},
  author = {Cohan, Arman and Feldman, Sergey and Beltagy, Iz},
  year = {2020},
  booktitle = {Proceedings of the 58th Annual Meeting of the ACL},
  doi = {10.18653/v1/2020.acl-main.207},
  file = {{PDF}:{FILES}/missing-first.pdf;{FILES}/2020.acl-main.207_specter.pdf;{FILES}/supplement.html}
}

@article{lo2020s2orc,
  title = {S2ORC: The Semantic Scholar Open Research Corpus},
  author = {Lo, Kyle and Wang, Lucy Lu},
  journal = {ACL},
  date = {2020-07-05},
  file = {Full Text PDF:s2orc.pdf:application/pdf}
}

@article{broken2021,
  title = {An entry whose braces never close,
  author = {Somebody, A.},

@misc{nofile2022,
  title = {A preprint without its file},
  year = {2022}
}

@misc{gone2019,
  title = {A paper whose file is gone},
  file = {/nowhere/gone.pdf}
}
"""


def test_a_better_bibtex_file_is_one_collection_with_its_items_files_and_problems(tmp_path):
    files = tmp_path / "files"
    files.mkdir()
    (files / "2020.acl-main.207_specter.pdf").write_bytes(
        (DEMO_COLLECTION / DEMO_ITEMS["specter"][0]).read_bytes()
    )
    (tmp_path / "s2orc.pdf").write_bytes((DEMO_COLLECTION / DEMO_ITEMS["s2orc"][0]).read_bytes())
    bib = tmp_path / "library.bib"
    bib.write_text(BETTER_BIBTEX.replace("{FILES}", str(files)), encoding="utf-8")

    collection = read_bibtex(bib, "mybib")

    items = {item.key: item for item in collection.items}
    assert set(items) == {"cohan2020specter", "lo2020s2orc"}
    specter = items["cohan2020specter"]
    assert specter.title.startswith("SPECTER: Document-level")
    assert specter.authors == ("Cohan, Arman", "Feldman, Sergey", "Beltagy, Iz")
    assert (specter.year, specter.doi, specter.citekey) == (
        2020,
        "10.18653/v1/2020.acl-main.207",
        "cohan2020specter",
    )
    # The first PDF that exists, of several paths; a relative path is taken from the .bib's folder.
    assert specter.pdf == files / "2020.acl-main.207_specter.pdf"
    assert items["lo2020s2orc"].pdf == tmp_path / "s2orc.pdf" and items["lo2020s2orc"].year == 2020
    problems = {problem.kind: problem for problem in collection.problems}
    assert set(problems) == {"malformed-entry", "no-pdf", "attachment-missing"}
    assert "library.bib, line" in problems["malformed-entry"].message
    assert "nofile2022" in problems["no-pdf"].item and "gone.pdf" in problems["attachment-missing"].message


def test_a_csl_json_export_is_read_and_one_that_is_not_json_is_refused(tmp_path):
    pdf = tmp_path / "specter.pdf"
    pdf.write_bytes((DEMO_COLLECTION / DEMO_ITEMS["specter"][0]).read_bytes())
    items = [
        {
            "id": "cohan2020specter",
            "type": "paper-conference",
            "title": "SPECTER",
            "author": [{"family": "Cohan", "given": "Arman"}, {"literal": "AllenAI"}],
            "issued": {"date-parts": [[2020, 7]]},
            "container-title": "ACL",
            "DOI": "https://doi.org/10.18653/V1/2020.ACL-MAIN.207",
            "file": str(pdf),
        },
        {"id": "nofile", "title": "No file"},
        {"title": "no id"},
    ]
    export = tmp_path / "library.json"
    export.write_text(json.dumps(items), encoding="utf-8")

    collection = read_csl_json(export, "mycsl")

    (item,) = collection.items
    assert (item.authors, item.year, item.doi, item.venue) == (
        ("Cohan, Arman", "AllenAI"),
        2020,
        "10.18653/v1/2020.acl-main.207",
        "ACL",
    )
    assert item.pdf == pdf
    assert sorted(problem.kind for problem in collection.problems) == ["malformed-entry", "no-pdf"]

    export.write_text("[{'id': 1,}", encoding="utf-8")
    with pytest.raises(LibraryError, match="is not JSON .*line 1.*export the library again"):
        read_csl_json(export, "mycsl")


def test_the_registry_adds_lists_and_removes_libraries_and_refuses_what_it_cannot_read(zotero, tmp_path):
    root = tmp_path / "data" / "collections"
    (root / "folder-papers").mkdir(parents=True)
    registry = registry_for(root)

    added = registry.add("zotero", tmp_path / "Zotero", "mylib")

    assert registry.file == tmp_path / "data" / "libraries.json"
    assert [library.name for library in registry.libraries()] == ["mylib"]
    sources = find_sources(root)
    assert sorted(sources.collections) == ["folder-papers", "mylib-embeddings", "mylib-evaluation"]
    assert sources.collections["mylib-evaluation"].kind == "zotero"
    assert collection_source(root, "mylib-embeddings").library == added
    with pytest.raises(LibraryError, match="taken"):
        registry.add("zotero", tmp_path / "Zotero", "mylib")
    with pytest.raises(LibraryError, match="No bibtex library at"):
        registry.add("bibtex", tmp_path / "missing.bib", "other")
    with pytest.raises(LibraryError, match="needs a name"):
        registry.add("csl", tmp_path / "Zotero" / "zotero.sqlite", None)
    with pytest.raises(LibraryError, match="refused: use lower-case"):
        registry.add("zotero", tmp_path / "Zotero", "My Library")
    (tmp_path / "bad.json").write_text("not json", encoding="utf-8")
    with pytest.raises(LibraryError, match="not JSON"):
        registry.add("csl", tmp_path / "bad.json", "bad")
    assert [library.name for library in registry.libraries()] == ["mylib"]

    registry.remove("mylib")
    assert registry.libraries() == [] and (tmp_path / "Zotero" / "zotero.sqlite").is_file()
    with pytest.raises(LibraryError, match="No library named 'mylib'"):
        registry.remove("mylib")


def test_a_library_moved_away_is_named_as_unreadable_and_the_folders_stay(zotero, tmp_path):
    root = tmp_path / "data" / "collections"
    (root / "folder-papers").mkdir(parents=True)
    registry_for(root).add("zotero", tmp_path / "Zotero", "mylib")
    (tmp_path / "Zotero" / "zotero.sqlite").rename(tmp_path / "zotero.sqlite.bak")

    sources = find_sources(root)

    assert list(sources.collections) == ["folder-papers"]
    assert (
        "cannot be read" in sources.unreadable["mylib"]
        and "library remove mylib" in sources.unreadable["mylib"]
    )
    with pytest.raises(LibraryError, match="no folder at .* and is no collection of a registered library"):
        collection_source(root, "mylib-embeddings")


def test_a_library_signature_changes_with_metadata_notes_and_membership_only(zotero, tmp_path):
    library, ids = zotero
    root = tmp_path / "data" / "collections"
    root.mkdir(parents=True)
    registry_for(root).add("zotero", tmp_path / "Zotero", "mylib")

    def signatures():
        return {name: source.signature() for name, source in find_sources(root).collections.items()}

    first = signatures()
    assert signatures() == first
    library.set_field(ids["s2orc"][0], "title", "S2ORC, retitled")
    edited = signatures()
    assert edited["mylib-embeddings"] != first["mylib-embeddings"]
    assert edited["mylib-evaluation"] == first["mylib-evaluation"]
    library.highlight(
        ids["longeval"][2], "faithfulness needs fine-grained units", page_index=1, page_label="2"
    )
    assert signatures()["mylib-evaluation"] != edited["mylib-evaluation"]


def test_a_file_linked_relative_to_zoteros_base_directory_is_found_with_base_dir(tmp_path):
    library = ZoteroLibrary(tmp_path / "Zotero")
    papers = library.collection("Papers")
    item, _ = library.item([papers], title="SPECTER")
    library.base_relative_pdf(item, "reading/specter.pdf")
    library.close()
    (tmp_path / "cloud" / "reading").mkdir(parents=True)
    (tmp_path / "cloud" / "reading" / "specter.pdf").write_bytes(
        (DEMO_COLLECTION / DEMO_ITEMS["specter"][0]).read_bytes()
    )

    (without,) = read_zotero(tmp_path / "Zotero", "lib")
    (problem,) = without.problems
    assert not without.items and problem.kind == "linked-file-missing" and "--base-dir" in problem.message

    (found,) = read_zotero(tmp_path / "Zotero", "lib", base_dir=tmp_path / "cloud")
    assert [item.pdf for item in found.items] == [tmp_path / "cloud" / "reading" / "specter.pdf"]

    root = tmp_path / "data" / "collections"
    registry = registry_for(root)
    with pytest.raises(LibraryError, match="only for a zotero library"):
        registry.add("bibtex", tmp_path / "Zotero" / "zotero.sqlite", "x", base_dir=tmp_path / "cloud")
    registry.add("zotero", tmp_path / "Zotero", "lib", base_dir=tmp_path / "cloud")
    assert len(find_sources(root).collections["lib-papers"].contents().papers) == 1
