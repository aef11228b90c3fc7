"""``insight-assets library`` in processes of its own, as a person runs it: what ``add`` says, every
item and problem from ``show``, ``list --json``, and a library parsed again only when its file
changes, across processes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from insight_assets_tests.command_line import run_cli

EXPORTS = Path(__file__).parent / "data" / "library_exports"


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "data" / "collections").mkdir(parents=True)
    shutil.copytree(EXPORTS / "jabref", tmp_path / "jabref")
    return tmp_path


def test_add_show_and_list_say_what_each_item_has(project):
    added = run_cli(project, "library", "add", "bibtex", "jabref/testjabref.bib", "--name", "old-jabref")
    assert added.returncode == 0, added.stderr
    assert "old-jabref:" in added.stdout and "0 with a PDF" in added.stdout
    assert (
        "- [attachment-missing]" in added.stdout
        and "more: insight-assets library show old-jabref" in added.stdout
    )

    run_cli(
        project, "library", "add", "bibtex", "jabref/test-library-with-attached-files.bib", "--name", "jabref"
    )
    shown = json.loads(run_cli(project, "library", "show", "jabref", "--json").stdout)
    (collection,) = shown["collections"]
    assert collection["name"] == "jabref" and collection["problems"] == []
    item = collection["items"][0]
    assert set(item) >= {"key", "citekey", "title", "authors", "year", "venue", "doi", "pdf", "matched_by"}
    assert Path(item["pdf"]).parent == (project / "jabref").resolve() and item["matched_by"] == "file field"

    old_items = json.loads(run_cli(project, "library", "show", "old-jabref", "--json").stdout)["collections"][
        0
    ]
    # Every item is listed, those without a PDF with "pdf": null beside their problems.
    assert old_items["items"] and all(item["pdf"] is None for item in old_items["items"])
    assert len(old_items["problems"]) == len(old_items["items"])

    listed = json.loads(run_cli(project, "library", "list", "--json").stdout)
    by_name = {row["name"]: row for row in listed["libraries"]}
    (old,) = by_name["old-jabref"]["collections"]
    assert old["with_pdf"] == 0 and old["items"] > 0 and old["problems"]["attachment-missing"] > 0
    assert by_name["jabref"]["collections"][0]["with_pdf"] == 6


def test_a_library_is_parsed_again_only_when_its_file_changes(project):
    bib = project / "jabref" / "test-library-with-attached-files.bib"
    assert run_cli(project, "library", "add", "bibtex", str(bib), "--name", "jabref").returncode == 0
    (kept,) = (project / "data" / "cache" / "libraries").glob("jabref.json")
    # The parse kept by the first process, marked so that reading it shows:
    saved = json.loads(kept.read_text())
    saved["collections"][0]["items"][0]["title"] = "read from the kept parse"
    kept.write_text(json.dumps(saved))

    unchanged = json.loads(run_cli(project, "library", "show", "jabref", "--json").stdout)
    os.utime(bib, ns=(bib.stat().st_atime_ns, bib.stat().st_mtime_ns + 1_000_000_000))
    changed = json.loads(run_cli(project, "library", "show", "jabref", "--json").stdout)

    titles = [item["title"] for item in unchanged["collections"][0]["items"]]
    assert "read from the kept parse" in titles
    assert "read from the kept parse" not in [item["title"] for item in changed["collections"][0]["items"]]


def test_a_csl_export_gets_its_pdfs_from_a_folder(project):
    export = project / "library.json"
    export.write_text(json.dumps([{"id": "minimal-mixed-case", "title": "A minimal PDF"}]))
    added = run_cli(project, "library", "add", "csl", str(export), "--name", "csl", "--pdfs", "jabref")
    assert added.returncode == 0, added.stderr
    shown = json.loads(run_cli(project, "library", "show", "csl", "--json").stdout)
    (item,) = shown["collections"][0]["items"]
    assert (item["matched_by"], Path(item["pdf"]).name) == ("citekey", "minimal-mixed-case.pdf")
    unmatched = [p for p in shown["collections"][0]["problems"] if p["kind"] == "unmatched-pdf"]
    assert len(unmatched) == 5


def test_mistakes_are_refused_in_one_sentence(project):
    not_zotero = run_cli(project, "library", "add", "zotero", "jabref")
    assert not_zotero.returncode == 2 and "No Zotero database in" in not_zotero.stderr
    json_as_bib = project / "library.json"
    json_as_bib.write_text("[]")
    refused = run_cli(project, "library", "add", "bibtex", str(json_as_bib), "--name", "x")
    assert refused.returncode == 2 and "holds no BibTeX entry" in refused.stderr
    assert "Traceback" not in not_zotero.stderr + refused.stderr
