"""BibTeX and CSL-JSON libraries as their tools write them: real exports of JabRef, Better BibTeX
and Mendeley (``data/library_exports/``, each with its licence), the forms of Zotero's own export,
metadata as the producer meant it, and a folder of PDFs for entries that name no file."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from insight_assets.core.library import LibraryError
from insight_assets.core.library.bibtex import read_bibtex
from insight_assets.core.library.csl_json import read_csl_json
from insight_assets.core.library.file_fields import linked_files
from insight_assets_tests.conftest import DEMO_COLLECTION
from insight_assets_tests.pdf_factory import write_pdf
from insight_assets_tests.zotero_library import DEMO_ITEMS

EXPORTS = Path(__file__).parents[1] / "data" / "library_exports"
JABREF, BETTER_BIBTEX = EXPORTS / "jabref", EXPORTS / "better-bibtex"


def problems_by_item(collection) -> dict[str, list]:
    found: dict[str, list] = {}
    for problem in collection.problems:
        found.setdefault(problem.item, []).append(problem)
    return found


def test_jabrefs_own_library_with_its_pdfs_beside_it_finds_every_pdf(tmp_path):
    library = tmp_path / "jabref"
    shutil.copytree(JABREF, library)

    collection = read_bibtex(library / "test-library-with-attached-files.bib", "jabref")

    assert len(collection.items) == 6 and not collection.problems
    for item in collection.items:
        assert item.pdf == library / f"{item.key}.pdf" and item.matched_by == "file field"


def test_jabref_2s_windows_relative_paths_and_links_are_named_as_written():
    collection = read_bibtex(JABREF / "testjabref.bib", "jabref2")

    messages = " ".join(problem.message for problem in collection.problems)
    kinds = {problem.kind for problem in collection.problems}
    assert not collection.items  # its PDFs are not in the repository
    assert "JabRef\\Aziz2009256-ChannelNeuralRecording" in messages
    assert "http://arxiv.org/pdf/2003.05580v3" in messages and "pdf-is-a-link" in kinds
    assert "could not be read ()" not in messages


def test_a_declared_encoding_is_honoured_and_a_keyless_entry_is_named_by_its_line():
    collection = read_bibtex(JABREF / "encoding-windows-1252-with-header.bib", "encoded")

    (problem,) = collection.problems
    assert problem.item == "line-3" and problem.kind == "no-pdf"
    assert "--pdfs DIR" in problem.message


def test_better_bibtex_home_relative_paths_find_their_pdfs(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    storage = tmp_path / "BBTTEST" / "storage"
    storage.mkdir(parents=True)
    for name in ("Adams_Huaynaputina.pdf", "Baltes_Staudinger_2000_Wisdom.pdf"):
        shutil.copyfile(DEMO_COLLECTION / DEMO_ITEMS["specter"][0], storage / name)

    biblatex = read_bibtex(BETTER_BIBTEX / "Better BibLaTeX.009.biblatex", "bbt")
    windows = read_bibtex(BETTER_BIBTEX / "windows path conversion #1939.bibtex", "bbt-windows")

    assert {item.pdf for item in biblatex.items} == {storage / "Adams_Huaynaputina.pdf"}
    (wainwright,) = windows.items
    assert wainwright.pdf == storage / "Baltes_Staudinger_2000_Wisdom.pdf"
    assert wainwright.venue == "Foundations and Trends® in Machine Learning"
    assert wainwright.title == "Graphical Models, Exponential Families, and Variational Inference"
    assert wainwright.authors == ("Wainwright, Martin J.", "Jordan, Michael I.")


def test_a_mendeley_export_reads_every_entry_with_its_names_family_first(tmp_path):
    collection = read_bibtex(BETTER_BIBTEX / "web_page and other mendeley idiocy.bib", "mendeley")

    kinds = [problem.kind for problem in collection.problems]
    # Mendeley gives two papers one key: both are read, the later under its line too.
    assert not collection.items and set(kinds) == {"no-pdf", "duplicate-key"}
    assert kinds.count("no-pdf") == 512 and kinds.count("duplicate-key") == 25
    assert any(problem.item.startswith("Black2020 (Fiction and morality") for problem in collection.problems)
    folder = tmp_path / "pdfs"
    folder.mkdir()
    shutil.copyfile(DEMO_COLLECTION / DEMO_ITEMS["specter"][0], folder / "Black2020.pdf")
    (black,) = read_bibtex(BETTER_BIBTEX / "web_page and other mendeley idiocy.bib", "mendeley", folder).items
    assert black.authors == ("Black, Jessica E", "Barnes, Jennifer L") and black.doi == "10.1037/ppm0000281"


def test_a_jabref_library_from_windows_names_its_paths_intact():
    collection = read_bibtex(BETTER_BIBTEX / "Jabref import - groups lost #1730-3.bib", "windows")

    messages = [problem.message for problem in collection.problems]
    assert any(
        "C:\\Users\\jfd1\\jfd1\\group\\papers\\2019\\A_Chau_Journal\\VSDH_MAC_MDPI_R1_electronics-845046.pdf is a "
        "Windows path" in message
        for message in messages
    )
    assert all(problem.kind == "attachment-missing" for problem in collection.problems)


@pytest.mark.parametrize(
    ("field", "path"),
    [
        # Zotero's own BibTeX export, on Windows and (older Zotero) with the path unescaped.
        (
            r"Full Text PDF:C\:\\Users\\me\\Zotero\\storage\\14284HWI\\Lo et al. - 2020.pdf:application/pdf",
            r"C:\Users\me\Zotero\storage\14284HWI\Lo et al. - 2020.pdf",
        ),
        (r"Test:E:\some\random\folder\test2.pdf:application/pdf", r"E:\some\random\folder\test2.pdf"),
        # Mendeley: the absolute path without its "/", LaTeX specials escaped; and on Windows.
        (
            r":Users/heatherwright/Documents/Scientific Papers/Adams\_Huaynaputina.pdf:pdf;::",
            "/Users/heatherwright/Documents/Scientific Papers/Adams_Huaynaputina.pdf",
        ),
        (
            r":C$\backslash$:/Users/somewhere/AppData/Local/Mendeley Ltd./Mendeley Desktop/Downloaded/test.pdf:pdf",
            "C:/Users/somewhere/AppData/Local/Mendeley Ltd./Mendeley Desktop/Downloaded/test.pdf",
        ),
        # Better BibTeX: never LaTeX-decoded (no no-break space, dash, cut at %).
        (r"~/papers/100% sure -- really\;twice.pdf", "~/papers/100% sure -- really;twice.pdf"),
        # JabRef: a file type, not a MIME type.
        (":minimal-mixed-case.pdf:PDF", "minimal-mixed-case.pdf"),
    ],
)
def test_each_producers_file_field_gives_the_path_it_meant(field, path):
    assert [file.path for file in linked_files(field)] == [path]


@pytest.fixture
def pdf_for_every_entry(tmp_path):
    """A --pdfs folder holding one PDF per citekey of the hand-written library."""
    folder = tmp_path / "pdfs"
    folder.mkdir()
    for key in ("king1983", "line-7", "stoc83"):
        shutil.copyfile(DEMO_COLLECTION / DEMO_ITEMS["specter"][0], folder / f"{key}.pdf")
    return folder


def test_metadata_is_read_as_the_producer_meant_it(tmp_path, capfd, pdf_for_every_entry):
    bib = tmp_path / "hand.bib"
    bib.write_text(
        r"""@string{stoc = "Symposium on Theory of Computing"}
@proceedings{stoc83, title = {Proceedings of the Fifteenth Annual ACM } # stoc, year = 1983, publisher = {ACM}}
@inproceedings{king1983, author = {King, Jr., Martin Luther and Alan de Brauw and {World Health Organization}},
  title = {On {D}reams}, crossref = {stoc83}}
@article{broken, title = {never closed,
@article{, title = {Keyless one}}
@article{, title = {Keyless two}, journal = "Proc. " # stoc}
""",
        encoding="utf-8",
    )

    collection = read_bibtex(bib, "hand", pdf_dir=pdf_for_every_entry)

    assert capfd.readouterr().err == ""  # the parser's complaints are problems, not stderr
    problems = problems_by_item(collection)
    (malformed,) = problems["line 5"]
    assert malformed.kind == "malformed-entry" and "Unexpected block start" in malformed.message
    assert [problem.kind for problem in problems["line-6 (Keyless one)"]] == ["no-matching-pdf"]
    assert {item.key for item in collection.items} == {"king1983", "stoc83", "line-7"}
    king = read_item(collection, "king1983")
    assert king == {
        "title": "On Dreams",
        "authors": ("King, Martin Luther, Jr.", "de Brauw, Alan", "World Health Organization"),
        "year": 1983,
        "venue": "Proceedings of the Fifteenth Annual ACM Symposium on Theory of Computing",
    }
    assert read_item(collection, "line-7")["venue"] == "Proc. Symposium on Theory of Computing"


def read_item(collection, key: str) -> dict:
    item = next(item for item in collection.items if item.key == key)
    return {"title": item.title, "authors": item.authors, "year": item.year, "venue": item.venue}


def test_a_json_file_given_as_bibtex_is_refused_in_one_sentence(tmp_path):
    export = tmp_path / "library.json"
    export.write_text('[{"id": "a", "title": "A"}]', encoding="utf-8")
    with pytest.raises(LibraryError, match="holds no BibTeX entry .*library add csl"):
        read_bibtex(export, "wrong")


def test_the_big_better_bibtex_export_is_read_whole(tmp_path):
    bib = tmp_path / "big.bib"
    bib.write_bytes(
        gzip.decompress((BETTER_BIBTEX / "Cache does not seem to fill #1296.bibtex.gz").read_bytes())
    )

    collection = read_bibtex(bib, "big")

    entries = [problem for problem in collection.problems if problem.kind != "malformed-entry"]
    assert len(entries) + len(collection.items) > 3_650
    assert all("{" not in problem.item for problem in entries)
    missing = [problem for problem in entries if problem.kind == "attachment-missing"]
    assert missing and all("~/BBTTEST/" in problem.message for problem in missing)


def test_csl_json_with_a_pdfs_folder_matches_by_citekey_doi_and_title(tmp_path):
    folder = tmp_path / "pdfs"
    folder.mkdir()
    shutil.copyfile(DEMO_COLLECTION / DEMO_ITEMS["longeval"][0], folder / "Adams2001.pdf")
    for name in ("specter", "papermage"):
        shutil.copyfile(DEMO_COLLECTION / DEMO_ITEMS[name][0], folder / f"download ({name[:2]}).pdf")
    # A paper that prints its DOI on page 1 (the demo papers do not).
    write_pdf(folder / "download (s2).pdf", ["A preprint\n\nhttps://doi.org/10.18653/V1/2020.ACL-MAIN.447."])
    items = json.loads((BETTER_BIBTEX / "Pandoc-LaTeX-SCHOMD Citation Export.csl.json").read_text())
    specter_title = DEMO_ITEMS["specter"][1]
    items += [
        {"id": "http://zotero.org/users/1/items/AB12", "type": "paper-conference", "title": specter_title},
        {
            "id": "lo2020",
            "title": "A title the PDF does not print",
            "DOI": "10.18653/v1/2020.acl-main.447",
            "author": [{"family": "Brauw", "given": "Alan", "non-dropping-particle": "de"}],
        },
    ]
    export = tmp_path / "library.json"
    export.write_text(json.dumps(items), encoding="utf-8")

    collection = read_csl_json(export, "csl", pdf_dir=folder)

    matched = {item.key: (item.pdf.name, item.matched_by) for item in collection.items}
    assert matched == {
        "Adams2001": ("Adams2001.pdf", "citekey"),
        "http://zotero.org/users/1/items/AB12": ("download (sp).pdf", "title"),
        "lo2020": ("download (s2).pdf", "doi"),
    }
    adams = next(item for item in collection.items if item.key == "Adams2001")
    assert "<b>" not in adams.title
    lo = next(item for item in collection.items if item.key == "lo2020")
    assert lo.authors == ("de Brauw, Alan",)
    unmatched = [problem for problem in collection.problems if problem.kind == "unmatched-pdf"]
    assert [Path(problem.item).name for problem in unmatched] == ["download (pa).pdf"]
    assert all(problem.severity == "warning" for problem in unmatched)
    assert {problem.kind for problem in collection.problems} == {"no-matching-pdf", "unmatched-pdf"}
