"""What each build changed, on real builds (`insight-assets build`, offline, in processes of their
own): a paper added, nothing changed, the paper removed, and a library title edited, each read from
`insight-assets changes --json`, the collection's page and the MCP tool ``what_changed`` over stdio."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import anyio
import dagster as dg
import duckdb
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from insight_assets.core.changes.store import unpack
from insight_assets_tests.command_line import SMALLEST_DEMO_PDF, BuiltProject, run_cli
from insight_assets_tests.conftest import DEMO_PDFS_BY_SIZE
from insight_assets_tests.pdf_factory import english_pages, write_pdf

pytestmark = pytest.mark.long  # builds in processes of their own, several each

COLLECTION = BuiltProject.COLLECTION
ADDED = DEMO_PDFS_BY_SIZE[1]  # the demo's next smallest paper
FINDING_KINDS = {"insight", "summary", "answer", "idea", "judge score"}


def build(project: Path, collection: str = COLLECTION) -> None:
    built = run_cli(project, "build", "--collection", collection, environment={"PYTHONHASHSEED": "1"})
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-3000:]


def changes(project: Path, *args: str, collection: str = COLLECTION) -> dict:
    shown = run_cli(project, "changes", "-c", collection, "--json", *args)
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def what_changed(project: Path) -> dict:
    """``what_changed`` as an assistant's client gets it, from a server it starts over stdio."""
    command = [sys.executable, "-m", "insight_assets.cli", "mcp", "--project", str(project)]
    environment = {"HF_HUB_OFFLINE": "1", "PATH": os.environ["PATH"]}

    async def session() -> dict:
        parameters = StdioServerParameters(command=command[0], args=command[1:], env=environment, cwd="/")
        async with Client(parameters) as client:
            answered = await client.call_tool("what_changed", {"collection": COLLECTION})
            assert not answered.is_error
            return answered.structured_content

    return anyio.run(session)


def theme_ids(project: Path, build: str) -> set[int]:
    """The ids of the themes a build kept."""
    with duckdb.connect(str(project / "data" / "warehouse.duckdb"), read_only=True) as db:
        (snapshot,) = db.execute(
            "SELECT snapshot FROM build_snapshots WHERE collection = ? AND build_id = ?", [COLLECTION, build]
        ).fetchone()
    return {theme.theme_id for theme in unpack(snapshot).themes}


def page_metadata(project: Path, name: str = "changes") -> str:
    """The metadata ``name`` of the last run's materialization of the collection's page: by default
    the digest it holds (the UI's history)."""
    with dg.DagsterInstance.from_config(str(project / "home")) as instance:
        run = instance.get_runs(limit=1)[0]
        records = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)
    (page,) = [
        record.dagster_event.event_specific_data.materialization
        for record in records
        if record.dagster_event.event_specific_data.materialization.asset_key.to_user_string()
        == "collection_report"
    ]
    return page.metadata[name].value


def step_builds(project: Path) -> dict[str, str]:
    """Each asset's ``build`` metadata in the last run: why it was built, reused or restored."""
    with dg.DagsterInstance.from_config(str(project / "home")) as instance:
        run = instance.get_runs(limit=1)[0]
        records = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)
    made = [record.dagster_event.event_specific_data.materialization for record in records]
    return {m.asset_key.to_user_string(): m.metadata["build"].value for m in made if "build" in m.metadata}


def digests(project: Path) -> list[Path]:
    return sorted((project / "data" / "reports" / COLLECTION / "changes").glob("*.html"))


def test_a_paper_added_nothing_changed_and_the_paper_removed_each_say_exactly_that(
    tmp_path, built_by_cli: BuiltProject
):
    project = built_by_cli.copy(tmp_path)
    first = changes(project)
    assert first["first"] and first["headline"].endswith("nothing to compare with")
    assert not digests(project)
    themes_before = theme_ids(project, first["build"])

    shutil.copyfile(ADDED, project / "data" / "collections" / COLLECTION / ADDED.name)
    build(project)
    added = changes(project)
    (paper,) = added["papers"]
    assert (paper["change"], paper["file"]) == ("added", ADDED.name) and paper["chunks_added"] > 0
    new_doc = paper["doc_id"]
    # The themes it joined, new or gaining it; the themes that went on kept their ids, the new
    # ones have ids of their own (the ids' rule on a theme that gains a paper: core/test_changes.py).
    joined = {t["theme_id"] for t in paper["themes_joined"]}
    assert joined and all(
        new_doc in [p["doc_id"] for p in t["papers_gained"]]
        for t in added["themes"]
        if t["theme_id"] in joined
    )
    new_ids = {t["theme_id"] for t in added["themes"] if t["change"] == "new"}
    assert new_ids and not new_ids & themes_before
    assert {t["theme_id"] for t in added["themes"] if t["change"] in ("changed", "gone")} <= themes_before
    findings = added["findings"]
    assert {f["kind"] for f in findings} <= FINDING_KINDS
    citing = [f for f in findings if new_doc in [p["doc_id"] for p in f["cites"]]]
    assert citing and {f["change"] for f in citing} <= {"new", "changed"}
    # What the paper brought is put down to it, cited or not: each new insight and judge score is on
    # a question over it.
    brought = [f for f in findings if f["kind"] in ("insight", "judge score") and f["change"] == "new"]
    assert brought and all(
        f["cause"] == "papers" and new_doc in [p["doc_id"] for p in f["cites"] + f["drawn_from"]]
        for f in brought
    )
    # Nothing else changed: every other change is put down to the papers, never to the model; what
    # the paper is not behind moved through a collection-wide step, is counted apart in the headline
    # and is said how. A paper added takes nothing away but through such a step.
    assert {f["cause"] for f in findings} <= {"papers", "collection"}
    moved = [f for f in findings if f["cause"] == "collection" and f["kind"] != "judge score"]
    assert all(f["cause"] == "collection" for f in findings if f["change"] == "gone")
    if moved:
        plural = "s" if len(moved) > 1 else ""
        assert added["headline"].endswith(
            f"{len(moved)} other finding{plural} moved through collection-wide steps"
        )
        assert set(added["through_collection"]) == {f["section"] for f in moved}
    else:
        assert "moved through" not in added["headline"] and added["through_collection"] == {}
    assert added["unchanged"]["paper"] == 1

    # The page opens with the same digest; the MCP tool gives it with passage ids.
    page = (project / "data" / "reports" / COLLECTION / "index.html").read_text()
    since = page[page.index('<section id="changes"') : page.index('<section id="collection"')]
    assert added["headline"][1:] in since and paper["title"] in since and "joined themes" in since
    assert ("Moved through the collection" in since) == bool(moved)
    served = what_changed(project)
    assert {key: value for key, value in served.items() if key != "findings"} == {
        key: value for key, value in added.items() if key != "findings"
    }
    assert [{k: v for k, v in f.items() if k != "passages"} for f in served["findings"]] == findings
    assert all(
        p == f"{COLLECTION}/{c}"
        for f in served["findings"]
        for p, c in zip(f["passages"], f["chunk_ids"], strict=True)
    )
    (digest,) = digests(project)
    assert page_metadata(project).startswith(
        f"## What changed in `{COLLECTION}`\n\n{added['headline'][0].upper()}"
    )
    assert digest.with_suffix(".md").read_text().startswith(f"## What changed in `{COLLECTION}`")

    build(project)
    unchanged = changes(project)
    assert not unchanged["changed"] and unchanged["headline"].startswith("nothing changed since")
    assert unchanged["papers"] == unchanged["findings"] == [] and len(digests(project)) == 1
    shown = run_cli(project, "changes", "-c", COLLECTION)
    assert shown.stdout.count("\n") == 3 and "Nothing changed since" in shown.stdout
    assert page_metadata(project).startswith("Nothing changed since the last build")

    (project / "data" / "collections" / COLLECTION / ADDED.name).unlink()
    build(project)
    removed = changes(project)
    assert [(p["change"], p["doc_id"]) for p in removed["papers"]] == [("removed", new_doc)]
    gone = [f for f in removed["findings"] if f["change"] == "gone"]
    assert gone and any(new_doc in [p["doc_id"] for p in f["cites"]] for f in gone)
    assert {p["title"] for f in gone for p in f["cites"] if p["doc_id"] == new_doc} == {paper["title"]}
    # Since the first build, the paper came and went: the papers, the themes (the first build's graph
    # comes back: core/themes/graph_archive.py) and every finding are as they were.
    since_first = changes(project, "--since", first["build"])
    assert since_first["papers"] == since_first["themes"] == since_first["findings"] == []
    # The steps that keep all they make in the warehouse, and in a vector table beside it, get the
    # first build's rows and vectors back rather than doing their work again
    # (core/storage/kept_builds.py); so do the steps after them.
    restored = {asset for asset, why in step_builds(project).items() if why.startswith("restored")}
    assert {
        "generated_questions",
        "insights",
        "judge_scores",
        "xsum_summaries",
        "contregen_answers",
        "knowledge_triples",
        "paper_summaries",
        "insight_rag_answers",
        "insight_retriever_accuracy",
        "scipip_ideas",
    } <= restored
    # The page asks its question of every method again only when what they answer from changed.
    assert page_metadata(project, "answers").startswith("kept from run")
    assert (
        len(digests(project)) == 2
        and 'href="changes/' in (project / "data" / "reports" / COLLECTION / "index.html").read_text()
    )

    # A short paper moves few chunks: the theme graph keeps its themes, and those that take in the
    # paper's chunks gain it under the ids they had.
    write_pdf(project / "data" / "collections" / COLLECTION / "note.pdf", english_pages(2))
    build(project)
    noted = changes(project)
    (note,) = noted["papers"]
    gaining = [t for t in noted["themes"] if note["doc_id"] in [p["doc_id"] for p in t["papers_gained"]]]
    kept = theme_ids(project, removed["build"])
    assert gaining and all(t["change"] == "changed" and t["theme_id"] in kept for t in gaining)
    assert {t["theme_id"] for t in gaining} == {t["theme_id"] for t in note["themes_joined"]}


def test_a_title_edited_in_the_library_is_the_one_change(tmp_path):
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    shutil.copyfile(SMALLEST_DEMO_PDF, pdfs / SMALLEST_DEMO_PDF.name)
    export = tmp_path / "library.json"

    def export_titled(title: str) -> None:
        item = {
            "id": SMALLEST_DEMO_PDF.stem,
            "type": "article-journal",
            "title": title,
            "author": [{"family": "Author", "given": "A."}],
            "issued": {"date-parts": [[2024]]},
        }
        export.write_text(json.dumps([item]))

    export_titled("The first title")
    (tmp_path / "data" / "collections").mkdir(parents=True)
    added = run_cli(tmp_path, "library", "add", "csl", str(export), "--name", "lib", "--pdfs", str(pdfs))
    assert added.returncode == 0, added.stderr
    build(tmp_path, "lib")
    export_titled("The second title")
    build(tmp_path, "lib")
    edited = changes(tmp_path, collection="lib")
    (paper,) = edited["papers"]
    assert paper["change"] == "metadata changed"
    assert paper["fields"] == {"title": {"before": "The first title", "after": "The second title"}}
    assert edited["themes"] == [] and paper["chunks_added"] == paper["chunks_removed"] == 0
    # A finding may quote the title; none changed for another reason.
    assert all(
        f["cause"] == "papers" and f["cites"] == [{"doc_id": paper["doc_id"], "title": "The second title"}]
        for f in edited["findings"]
    )
