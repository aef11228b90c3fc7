"""A Zotero library built into collections: one partition per top-level collection, its papers
carrying the library's metadata, the reader's notes searchable apart, items without a PDF as
problem rows, and the library's changes (an item added, edited, trashed) flowing through Dagster
as they would from a folder: only what is stale is built, and nothing of a removed paper is left."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest

from insight_assets.core.collection_sources import registry_for
from insight_assets.core.ingestion.ingest import paper_names
from insight_assets.core.page.collection_page import CollectionFacts, SideBySide, render_page
from insight_assets.core.reader_notes import VECTOR_KIND, search_notes
from insight_assets.core.retrieval import Retriever
from insight_assets.core.storage.stores import VectorStore, warehouse_tables
from insight_assets.defs.automation import collection_folders_sensor
from insight_assets.defs.ingestion.assets import source_documents
from insight_assets.defs.resources import EmbedderResource, LLMResource
from insight_assets.defs.sources import BUILD_SIGNATURE_TAG
from insight_assets_tests.conftest import DEMO_COLLECTION
from insight_assets_tests.defs.helpers import assets_up_to, check, failure, materialize_collection, metadata
from insight_assets_tests.zotero_library import DEMO_ITEMS, demo_library

EMBEDDINGS, EVALUATION = "mylib-embeddings", "mylib-evaluation"
HASHING = EmbedderResource(provider="hashing")


@pytest.fixture
def zotero(tmp_path, storage):
    """The demo papers in a Zotero library registered as ``mylib``."""
    library, ids = demo_library(tmp_path, DEMO_COLLECTION)
    registry_for(storage.collections_root).add("zotero", tmp_path / "Zotero", "mylib")
    yield library, ids
    library.close()


def build(instance, storage, collection: str, **options) -> dg.ExecuteInProcessResult:
    """Ingestion, citations and the reader's notes of ``collection``: what reads the library."""
    return materialize_collection(
        instance,
        storage,
        HASHING,
        collection,
        assets=assets_up_to("citations", "chunk_embeddings", "reader_note_embeddings"),
        **options,
    )


def rows_of(storage, collection: str) -> dict[str, list]:
    """Every warehouse table's rows of ``collection`` (but the build notes), sorted."""
    found = {}
    for table in sorted(warehouse_tables()):
        if table == "asset_builds":
            continue
        rows = storage.warehouse.rows(f"SELECT * FROM {table} WHERE collection = ?", [collection])
        found[table] = sorted(repr(sorted(row.items())) for row in rows)
    return found


def doc_id_of(storage, collection: str, title_start: str) -> str:
    (doc_id,) = [
        row["doc_id"]
        for row in paper_names(storage.warehouse, collection)
        if row["title"].startswith(title_start)
    ]
    return doc_id


def test_a_zotero_library_builds_one_partition_per_collection_with_the_librarys_metadata(
    instance, storage, zotero
):
    for collection in (EMBEDDINGS, EVALUATION):
        assert build(instance, storage, collection).success
    assert sorted(instance.get_dynamic_partitions("collection")) == [EMBEDDINGS, EVALUATION]

    papers = {row["title"]: row for row in storage.warehouse.rows("SELECT * FROM papers ORDER BY title")}
    specter = papers[DEMO_ITEMS["specter"][1]]
    assert specter["collection"] == EMBEDDINGS and specter["source"] == "zotero"
    assert specter["authors"][0] == "Cohan, Arman" and specter["year"] == 2020
    assert (specter["citekey"], specter["doi"]) == ("cohan2020specter", "10.18653/v1/2020.acl-main.207")
    assert specter["link"].startswith("zotero://select/library/items/")
    # The sub-collection's paper is in its top-level collection.
    assert papers[DEMO_ITEMS["literature-graph"][1]]["collection"] == EMBEDDINGS
    # The library wins over the PDF, and the difference is recorded.
    papermage = papers["PaperMage: a toolkit for visually-rich scientific documents"]
    assert papermage["pdf_title"].startswith("PaperMage: A Unified Toolkit")
    assert papermage["differences"] and "the library says" in papermage["differences"][0]
    titles = {row["title"] for row in paper_names(storage.warehouse, EVALUATION)}
    assert "PaperMage: a toolkit for visually-rich scientific documents" in titles


def test_items_without_a_pdf_are_problem_rows_and_the_rest_of_the_collection_builds(
    instance, storage, zotero
):
    result = build(instance, storage, EVALUATION)

    assert result.success
    problems = storage.warehouse.rows(
        "SELECT item, kind, message FROM source_problems WHERE collection = ?", [EVALUATION]
    )
    assert sorted(problem["kind"] for problem in problems) == [
        "attachment-missing",
        "linked-file-missing",
        "no-pdf",
    ]
    evaluation = check(result, "every_item_has_a_pdf")
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.WARN
    assert evaluation.metadata["items_without_pdf"].value == 3
    assert metadata(result, "parsed_documents")["dagster/row_count"] == 2
    # The embeddings collection has every PDF.
    assert check(build(instance, storage, EMBEDDINGS), "every_item_has_a_pdf").passed


def test_a_collection_none_of_whose_items_has_a_pdf_fails_saying_why(instance, storage, zotero):
    library, ids = zotero
    for name in ("longeval", "papermage"):
        library.trash(ids[name][0])

    result = build(instance, storage, EVALUATION, raise_on_error=False)

    step, message = failure(result)
    assert step == "source_documents"
    assert "no item of zotero library 'mylib'" in message and "(3 item(s) without one)" in message
    # The first reasons, each with what to do, in the sentence itself.
    assert "(A paper only linked on the web) has no PDF attachment in Zotero" in message
    assert "never synced to this computer" in message and "relink it in Zotero" in message


def test_the_page_links_each_paper_back_to_zotero_and_cites_it_by_citekey(instance, storage, zotero):
    build(instance, storage, EMBEDDINGS)
    facts = CollectionFacts(
        papers=paper_names(storage.warehouse, EMBEDDINGS),
        problems=[],
        chunks={},
        citation_links=0,
        citation_graph_png=b"",
    )

    page = render_page(EMBEDDINGS, facts, [], SideBySide(None, why_not="not asked"))

    key = zotero[1]["specter"][1]
    assert f'<a href="zotero://select/library/items/{key}">SPECTER: Document-level' in page
    assert "@cohan2020specter" in page and "doi:10.18653/v1/2020.acl-main.447" in page
    assert "Cohan, Arman; Feldman, Sergey; Beltagy, Iz et al." in page


def test_highlights_are_searchable_labelled_as_your_notes_and_never_mixed_with_the_papers(
    instance, storage, zotero
):
    result = build(instance, storage, EMBEDDINGS)
    assert metadata(result, "reader_note_embeddings")["dagster/row_count"] == 3

    (hit, *_) = search_notes(
        storage.warehouse,
        storage.vectors_uri,
        HASHING.get_embedder(),
        EMBEDDINGS,
        "citation-informed transformers",
    )
    assert hit.label.startswith("your notes: highlight on SPECTER") and "@cohan2020specter, p. 1" in hit.label
    assert hit.comment == "the core idea: citations as a training signal"
    # The papers' own search holds no note, and the notes live in a table of their own.
    retriever = Retriever.open(storage.warehouse, storage.vectors, EMBEDDINGS, HASHING.get_embedder())
    note_ids = set(
        VectorStore(storage.vectors_uri, kind=VECTOR_KIND).read(EMBEDDINGS)["chunk_id"].to_pylist()
    )
    hits = retriever.search(
        "citation-informed transformers learn document-level embeddings", k=50, mode="hybrid"
    )
    assert hits and not {h.chunk_id for h in hits} & note_ids
    # A folder collection has none, and says so.
    assert not check(build(instance, storage, EVALUATION), "reader_notes_found").passed


def test_an_item_removed_from_a_collection_leaves_no_row_or_vector_and_changes_only_what_read_it(
    instance, storage, zotero
):
    library, ids = zotero
    build(instance, storage, EMBEDDINGS)
    build(instance, storage, EVALUATION)
    specter = doc_id_of(storage, EMBEDDINGS, "SPECTER")
    evaluation_before = rows_of(storage, EVALUATION)

    library.trash(ids["specter"][0])
    again = build(instance, storage, EMBEDDINGS)

    assert again.success
    for table, rows in rows_of(storage, EMBEDDINGS).items():
        assert not [row for row in rows if specter in row], f"{table} still holds the removed paper"
    for kind in ("chunk_embeddings", VECTOR_KIND):
        vectors = VectorStore(storage.vectors_uri, kind=kind).read(EMBEDDINGS)
        assert specter not in set(vectors["doc_id"].to_pylist()), kind
    assert metadata(again, "chunk_embeddings")["chunks_embedded"] == 0  # the other papers' vectors are reused
    assert metadata(again, "reader_note_embeddings")["dagster/row_count"] == 0
    assert rows_of(storage, EVALUATION) == evaluation_before

    # Taken out of the collection (not trashed) is the same.
    library.remove_from(ids["collections"]["embeddings"], ids["s2orc"][0])
    build(instance, storage, EMBEDDINGS)
    assert [row["title"] for row in paper_names(storage.warehouse, EMBEDDINGS)] == [
        DEMO_ITEMS["literature-graph"][1]
    ]


def test_a_metadata_edit_rewrites_metadata_and_an_added_item_parses_only_that_paper(
    instance, storage, zotero
):
    library, ids = zotero
    build(instance, storage, EMBEDDINGS)

    library.set_field(ids["s2orc"][0], "title", "S2ORC (retitled in Zotero)")
    edited = build(instance, storage, EMBEDDINGS)

    assert "S2ORC (retitled in Zotero)" in {
        row["title"] for row in paper_names(storage.warehouse, EMBEDDINGS)
    }
    assert metadata(edited, "parsed_documents")["documents_parsed"] == 0
    # The vectors are the same: none embedded again, and their table is not written.
    embeddings = metadata(edited, "chunk_embeddings")
    assert embeddings["chunks_embedded"] == 0 and embeddings["chunks_reused"] > 0
    assert embeddings["vector_write_seconds"] == 0

    item, _ = library.item(
        [ids["collections"]["graphs"]], title=DEMO_ITEMS["longeval"][1], doi=DEMO_ITEMS["longeval"][4]
    )
    library.stored_pdf(item, DEMO_COLLECTION / DEMO_ITEMS["longeval"][0])
    added = build(instance, storage, EMBEDDINGS)

    assert metadata(added, "parsed_documents")["documents_parsed"] == 1
    assert metadata(added, "parsed_documents")["dagster/row_count"] == 4


def test_the_sensors_first_tick_builds_only_what_changed_since_the_last_successful_build(
    instance, storage, zotero
):
    library, ids = zotero
    context = lambda cursor=None: dg.build_sensor_context(
        instance=instance,
        cursor=cursor,
        resources={"storage": storage, "llm": LLMResource(), "embedder": HASHING},
    )
    first = collection_folders_sensor(context())
    assert sorted(r.partition_key for r in first.run_requests) == [EMBEDDINGS, EVALUATION]
    # Both built successfully, tagged with what they were built from.
    instance.add_dynamic_partitions("collection", [EMBEDDINGS, EVALUATION])
    for request in first.run_requests:
        assert dg.materialize(
            [source_documents],
            instance=instance,
            partition_key=request.partition_key,
            resources={"storage": storage},
            tags={BUILD_SIGNATURE_TAG: request.tags[BUILD_SIGNATURE_TAG]},
        ).success

    # A new Dagster home's sensor (no cursor) finds both as built: no run.
    fresh = collection_folders_sensor(context())
    assert fresh.run_requests == []

    library.set_field(ids["longeval"][0], "title", "LongEval, retitled")
    changed = collection_folders_sensor(context(fresh.cursor))
    assert [r.partition_key for r in changed.run_requests] == [EVALUATION]
    assert [event.partition for event in changed.asset_events] == [EVALUATION]


def test_a_library_whose_database_is_gone_fails_its_build_in_one_sentence(
    instance, storage, zotero, tmp_path
):
    build(instance, storage, EMBEDDINGS)
    (tmp_path / "Zotero" / "zotero.sqlite").rename(tmp_path / "moved.sqlite")

    result = build(instance, storage, EMBEDDINGS, raise_on_error=False)

    step, message = failure(result)
    assert step == "source_documents"
    assert "cannot be read" in message and "library remove mylib" in message and "Traceback" not in message


def test_a_bibtex_library_is_a_collection_whose_papers_carry_their_citekeys(instance, storage, tmp_path):
    files = tmp_path / "pdfs"
    files.mkdir()
    entries = []
    for name in ("specter", "s2orc"):
        file, title, authors, _date, doi = DEMO_ITEMS[name]
        (files / file).write_bytes((DEMO_COLLECTION / file).read_bytes())
        people = " and ".join(f"{last}, {first}" for first, last in authors)
        entries.append(
            f"@inproceedings{{{name}2020,\n  title = {{{title}}},\n  author = {{{people}}},\n  year = {{2020}},\n"
            f"  doi = {{{doi}}},\n  file = {{{files / file}}}\n}}\n"
        )
    entries.append("@article{broken,\n  title = {never closed,\n")
    bib = tmp_path / "library.bib"
    bib.write_text("\n".join(entries), encoding="utf-8")
    registry_for(storage.collections_root).add("bibtex", bib, "mybib")

    result = build(instance, storage, "mybib")

    assert result.success
    cites = {
        row["citekey"]
        for row in storage.warehouse.rows("SELECT citekey FROM papers WHERE collection = 'mybib'")
    }
    assert cites == {"specter2020", "s2orc2020"}
    (problem,) = storage.warehouse.rows(
        "SELECT kind, message FROM source_problems WHERE collection = 'mybib'"
    )
    assert problem["kind"] == "malformed-entry" and "library.bib, line" in problem["message"]
    assert not Path(storage.collections_root, "mybib").exists()  # nothing copied into the collections folder


def test_the_mcp_server_lists_library_collections_and_finds_your_notes_apart(
    instance, storage, zotero, tmp_path
):
    from insight_assets.app.mcp import reading
    from insight_assets.app.mcp.collections import Collections

    build(instance, storage, EMBEDDINGS)
    server = Collections(storage, HASHING, lambda: LLMResource(data_dir=str(tmp_path / "llm")))

    listed = server.list_collections().data["collections"]
    assert {(c["name"], c["source"], c["stale"]) for c in listed} == {
        (EMBEDDINGS, "zotero", False),
        (EVALUATION, "zotero", False),
    }
    found = reading.search(server, "citation-informed transformers", EMBEDDINGS, k=3, notes=True)
    assert all("your notes" not in passage["text"] for passage in found.data["results"])
    assert {p["cite"] for p in found.data["results"]} <= {
        "@cohan2020specter",
        "doi:10.18653/v1/2020.acl-main.447",
        "doi:10.18653/v1/n18-3011",
    }
    (first, *_) = found.data["your_notes"]
    assert (
        first["source"] == "your notes"
        and first["page_label"] == "1"
        and first["cite"] == "@cohan2020specter"
    )
    assert '"source": "your notes"' in found.text
    without = reading.search(server, "citation-informed transformers", EMBEDDINGS, k=3)
    assert "your_notes" not in without.data
    # A passage followed to its paper: the library's metadata, and the DOI's address as its link.
    corpus = reading.search(server, "the Semantic Scholar open research corpus", EMBEDDINGS, k=5)
    doi_passage = next(p for p in corpus.data["results"] if p["cite"].startswith("doi:"))
    assert doi_passage["url"] == "https://doi.org/" + doi_passage["cite"].removeprefix("doi:")
    paper = reading.fetch(server, doi_passage["id"]).data["metadata"]["paper"]
    assert paper["doi"] and paper["authors"] and paper["library_link"].startswith("zotero://select/")

    zotero[0].set_field(zotero[1]["s2orc"][0], "title", "S2ORC, retitled")
    assert {c["name"]: c["stale"] for c in server.list_collections().data["collections"]}[EMBEDDINGS]


def test_every_citation_of_a_library_paper_names_its_citekey_or_doi_and_the_page(instance, storage, zotero):
    from insight_assets.core.retrieval.citing import Source, load_sources, render_citations
    from insight_assets.defs.asking import Asked, Citation, MethodAnswer, with_cites

    build(instance, storage, EMBEDDINGS)
    specter = doc_id_of(storage, EMBEDDINGS, "SPECTER")

    # Stored citations, rendered for people (XSum's, ConTReGen's, Insight-RAG's texts).
    sources = load_sources(storage.warehouse, EMBEDDINGS, "passage")
    chunk_id, source = next((cid, s) for cid, s in sources.items() if s.doc_id == specter)
    assert render_citations(f"A claim [{chunk_id}].", sources).endswith(
        f"@cohan2020specter, p. {source.page_start})."
    )
    # Passages found at question time carry it too (the ask flows' sources).
    retriever = Retriever.open(storage.warehouse, storage.vectors, EMBEDDINGS, HASHING.get_embedder())
    hits = retriever.search("citation-informed transformers", k=20, mode="hybrid")
    assert {Source.of(hit).label.split(", ")[-2] for hit in hits if hit.doc_id == specter} == {
        "@cohan2020specter"
    }
    assert all(hit.cite.startswith(("@", "doi:")) for hit in hits)
    # The papers an answer cites, as `ask` lists them.
    asked = Asked(EMBEDDINGS, "q", storage, HASHING)
    answer = with_cites(MethodAnswer("text", (Citation(DEMO_ITEMS["s2orc"][1], (3, 4)),)), asked)
    assert (
        answer.citations[0].label
        == f"{DEMO_ITEMS['s2orc'][1]}, doi:10.18653/v1/2020.acl-main.447, pp. 3\u20134"
    )


def test_contregen_told_to_use_your_notes_cites_them_as_yours_and_not_otherwise(
    instance, storage, zotero, tmp_path
):
    from insight_assets.defs.asking import Asked, ask_each
    from insight_assets.defs.contregen.ask import ASK

    build(instance, storage, EMBEDDINGS)
    llm = LLMResource(data_dir=str(tmp_path / "llm"))
    question = "How do citation-informed transformers learn document embeddings?"

    (with_notes,) = ask_each(Asked(EMBEDDINGS, question, storage, HASHING, {"notes": True}), [ASK], llm)
    (without,) = ask_each(Asked(EMBEDDINGS, question, storage, HASHING, {}), [ASK], llm)

    assert with_notes.ok and without.ok
    labels = [citation.label for citation in with_notes.answer.citations]
    assert any(
        label.startswith("your notes: highlight on SPECTER") and "@cohan2020specter, p." in label
        for label in labels
    )
    assert "(your notes: highlight on SPECTER" in with_notes.answer.text
    assert "your notes" not in without.answer.text + " ".join(c.label for c in without.answer.citations)


def test_jabrefs_own_library_with_its_pdfs_beside_it_is_read_whole_and_its_form_builds(
    instance, storage, tmp_path
):
    exports = Path(__file__).parents[1] / "data" / "library_exports" / "jabref"
    library = tmp_path / "jabref"
    shutil.copytree(exports, library)
    registry = registry_for(storage.collections_root)
    registry.add("bibtex", library / "test-library-with-attached-files.bib", "jabref")

    result = build(instance, storage, "jabref", raise_on_error=False)

    # Every PDF is found beside the .bib; JabRef's test PDFs hold a line of text each, which parsing
    # judges too little to be a paper.
    assert check(result, "every_item_has_a_pdf").passed
    items = storage.warehouse.rows("SELECT matched_by FROM library_items WHERE collection = 'jabref'")
    assert [row["matched_by"] for row in items] == ["file field"] * 6
    assert "too_little_text" in failure(result)[1]

    # The same form (JabRef's `:file.pdf:PDF`, its file directory declared) over papers builds.
    papers = tmp_path / "papers"
    shutil.copytree(DEMO_COLLECTION, papers)
    entries = [
        f"@Article{{{name},\n  title = {{{title}}},\n  file = {{:{file}:PDF}},\n}}\n"
        for name, (file, title, *_) in DEMO_ITEMS.items()
    ]
    bib = tmp_path / "jabref-demo.bib"
    bib.write_text("\n".join(entries) + "\n@Comment{jabref-meta: fileDirectory:papers;}\n", encoding="utf-8")
    registry.add("bibtex", bib, "jabref-demo")

    built = build(instance, storage, "jabref-demo")

    assert built.success and metadata(built, "parsed_documents")["dagster/row_count"] == len(DEMO_ITEMS)
