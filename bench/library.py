"""library: a 100-item Zotero library built as a collection, against the same PDFs as a folder.

A real ``zotero.sqlite`` is made from Zotero's own schema (the tests' builder) with one top-level
collection of every corpus PDF (bad/ included, each stored under ``storage/<key>/``, two highlights
and a note on each), plus items without a PDF up to 100 items. The bare baseline is the same PDFs
as a folder collection (symlinks), ingested side by side in the same run into the same kind of
stores with the bundled embedder. Then, on the library: a no-change rerun, a metadata edit (one
title), and one item trashed. Reported: seconds per step, the library's own overhead (reading
``zotero.sqlite``, signatures, the metadata and notes rows, the notes' vectors) as a ratio of the
folder's, and what each change rebuilt. ``--quick``: 6 items.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import dagster as dg

from bench.common import BAD, collections, print_table, ratio, smallest, summary, timed
from bench.pipeline import link_collection, materialize, metadata, temp_storage
from insight_assets.core.collection_sources import find_sources, registry_for
from insight_assets.core.embedding.models import LocalEmbedder
from insight_assets.core.library.zotero import read_zotero
from insight_assets.defs.resources import EmbedderResource
from insight_assets_tests.zotero_library import ZoteroLibrary

ITEMS = 100
QUICK_ITEMS = 6
COLUMNS = ["step", "seconds", "documents", "parsed", "embedded", "notes", "problems"]


def make_library(root: Path, pdfs: list[Path], items: int) -> tuple[ZoteroLibrary, list[int]]:
    """One collection "All" of ``items`` items: one per PDF, then items with only a web link."""
    library = ZoteroLibrary(root / "Zotero")
    everything = library.collection("All")
    ids = []
    for number, pdf in enumerate(pdfs):
        item, _ = library.item(
            [everything], title=f"{pdf.stem} (as filed in Zotero)", date="2024", doi=f"10.5555/bench.{number}"
        )
        attachment, _ = library.stored_pdf(item, pdf)
        library.highlight(
            attachment, f"a sentence the reader marked in {pdf.stem}", page_index=0, page_label="1"
        )
        library.highlight(
            attachment, "", page_index=1, page_label="2", comment="compare with the baseline paper"
        )
        library.note(item, f"<p>Why {pdf.stem} matters for the review.</p>")
        ids.append(item)
    for number in range(items - len(pdfs)):
        item, _ = library.item([everything], title=f"A paper only linked on the web {number}")
        library.web_link(item, f"https://example.org/{number}")
    return library, ids


def build(instance, storage, collection: str) -> tuple[float, dict]:
    seconds, result = timed(materialize, instance, storage, EmbedderResource(), collection)
    return seconds, metadata(result)


def row(step: str, seconds: float, report: dict) -> dict:
    notes = report.get("reader_note_embeddings", {})
    return {
        "step": step,
        "seconds": seconds,
        "documents": report["parsed_documents"]["dagster/row_count"],
        "parsed": report["parsed_documents"].get("documents_parsed", 0),
        "embedded": report["chunk_embeddings"].get("chunks_embedded", 0) + notes.get("notes_embedded", 0),
        "notes": notes.get("dagster/row_count", 0),
        "problems": report["source_documents"].get("items_without_pdf", 0),
    }


def run(corpus: Path, quick: bool) -> dict:
    folders = collections(corpus)
    pdfs = [pdf for name, files in folders.items() for pdf in files]
    if quick:
        pdfs = smallest(
            [pdf for name, files in folders.items() if name != BAD for pdf in files], QUICK_ITEMS - 1
        )
    items = QUICK_ITEMS if quick else max(ITEMS, len(pdfs))
    load_s, _ = timed(lambda: LocalEmbedder().model)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-library-") as tmp, dg.instance_for_test() as instance:
        root = Path(tmp)
        # Stores of their own each, so that neither side reuses the other's parses.
        storage, baseline = temp_storage(root / "library"), temp_storage(root / "baseline")
        library, ids = make_library(root, pdfs, items)
        registry_for(storage.collections_root).add("zotero", root / "Zotero", "zot")
        link_collection(baseline, "folder", pdfs)

        # Read afresh (a process reads the library once per state of its file; `add` read it already).
        read_library_s, _ = timed(read_zotero, root / "Zotero", "zot")
        sources = find_sources(storage.collections_root)
        signature_s, _ = timed(lambda: sources.collections["zot-all"].signature())
        folder_signature_s, _ = timed(
            lambda: find_sources(baseline.collections_root).collections["folder"].signature()
        )

        # A first run pays for Dagster's, LanceDB's and DuckDB's first use: on neither side.
        warm_up = temp_storage(root / "warm-up")
        link_collection(warm_up, "warm-up", pdfs[:1])
        build(instance, warm_up, "warm-up")
        folder_s, folder = build(instance, baseline, "folder")
        rows.append(row("folder of the same PDFs (baseline)", folder_s, folder))
        library_s, built = build(instance, storage, "zot-all")
        rows.append(row("Zotero library, first build", library_s, built))
        rerun_s, rerun = build(instance, storage, "zot-all")
        rows.append(row("no change", rerun_s, rerun))
        library.set_field(ids[0], "title", "A title edited in Zotero")
        time.sleep(0.01)
        edit_s, edited = build(instance, storage, "zot-all")
        rows.append(row("one title edited", edit_s, edited))
        library.trash(ids[1])
        trash_s, trashed = build(instance, storage, "zot-all")
        rows.append(row("one item trashed", trash_s, trashed))
        library.close()

    print_table(
        rows,
        COLUMNS,
        title=f"library: {items} Zotero items ({len(pdfs)} PDFs) against the same PDFs as a folder; "
        f"model loaded first in {load_s:.1f} s",
    )
    print(
        f"reading zotero.sqlite (a snapshot at its last commit: every item, attachment and note) {read_library_s * 1000:.0f} ms; "
        "the library collection's "
        f"signature {signature_s * 1000:.0f} ms, the folder's {folder_signature_s * 1000:.0f} ms"
    )
    overhead = ratio(library_s, folder_s)
    return {
        "summary": summary(
            f"{items} items: first build {library_s:.0f} s (folder {folder_s:.0f} s), no-change {rerun_s:.0f} s, "
            f"title edit {edit_s:.0f} s, trash {trash_s:.0f} s",
            ratio=overhead,
            target="library <= 1.1x folder",
            met=overhead is not None and overhead <= 1.1,
        ),
        "rows": rows,
        "read_library_s": read_library_s,
        "signature_s": signature_s,
        "folder_signature_s": folder_signature_s,
    }
