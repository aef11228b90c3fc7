"""Collections the project has never seen: garbled and nearly empty PDFs, empty folders, upstream
partitions never built. Nothing wrong gets in, and every outcome is one clear sentence."""

from __future__ import annotations

from pathlib import Path

from insight_assets.defs.ingestion import assets as ingestion
from insight_assets.defs.ingestion import embeddings
from insight_assets.defs.insightgen import themes
from insight_assets.defs.resources import StorageResource
from insight_assets.defs.runs import INGESTION_ASSETS
from insight_assets_tests import pdf_factory as make
from insight_assets_tests.conftest import DEMO_PDFS_BY_SIZE
from insight_assets_tests.defs.helpers import check, failure, materialize_collection, metadata

DEMO_PDF = make.DEMO_PAPER


def rows(storage: StorageResource, sql: str, *params) -> list[dict]:
    return storage.warehouse.rows(sql, list(params))


def test_garbled_and_nearly_empty_pdfs_are_not_papers(instance, storage, hashing_embedder, tmp_path):
    folder = Path(storage.collections_root) / "unseen"
    folder.mkdir()
    make.write_pdf(folder / "broken-font.pdf", make.english_pages(12), remap=make.caesar)
    make.write_pdf(
        folder / "poor-ocr.pdf", [make.ocr_noise(p, 0.4) for p in make.english_pages(5)], scanned=True
    )
    make.write_damaged_stream(folder / "damaged.pdf", "Result", make.english_text()[:3000])
    make.write_pdf(folder / "mixed.pdf", make.english_pages(8), remap=make.symbols, remap_pages=[3, 6])
    (folder / "good.pdf").write_bytes(DEMO_PDF.read_bytes())

    result = materialize_collection(instance, storage, hashing_embedder, "unseen")
    assert result.success

    problems = {
        (row["file"], row["kind"], row["severity"]) for row in rows(storage, "SELECT * FROM parse_problems")
    }
    assert problems == {
        ("broken-font.pdf", "garbled", "error"),
        ("damaged.pdf", "corrupted", "error"),
        ("poor-ocr.pdf", "poor_text", "warning"),
        ("mixed.pdf", "garbled_pages", "warning"),
    }
    verdicts = {
        row["file"]: row["verdict"] for row in rows(storage, "SELECT file, verdict FROM text_quality")
    }
    assert verdicts == {
        "broken-font.pdf": "unusable",
        "damaged.pdf": "unusable",
        "poor-ocr.pdf": "degraded",
        "mixed.pdf": "degraded",
        "good.pdf": "usable",
    }
    # No chunk, and so no vector, comes from an unusable file or from a dropped page.
    chunked = {
        row["file"]: row["texts"]
        for row in rows(
            storage,
            """SELECT d.file, list(c.text) AS texts FROM chunks c JOIN parsed_documents d
               USING (collection, doc_id) GROUP BY d.file""",
        )
    }
    assert set(chunked) == {"poor-ocr.pdf", "mixed.pdf", "good.pdf"}
    dropped = rows(
        storage,
        """SELECT p.page, p.text FROM parsed_pages p JOIN parsed_documents d USING (collection, doc_id)
           WHERE d.file = 'mixed.pdf' AND p.text = '' ORDER BY p.page""",
    )
    assert [row["page"] for row in dropped] == [3, 6]
    assert not any(
        "\ue000" <= ch <= "\uf8ff" or "\u2700" <= ch <= "\u27bf"
        for text in chunked["mixed.pdf"]
        for ch in text
    )
    warning = rows(storage, "SELECT message FROM parse_problems WHERE kind = 'garbled_pages'")[0]["message"]
    assert "2 of 8 pages are garbled and were left out: pages 3, 6" in warning
    parsed = metadata(result, "parsed_documents")
    assert parsed["files_with_errors"] == 2 and parsed["documents_degraded"] == 2
    assert "| broken-font.pdf | unusable |" in parsed["text_quality"]
    assert not check(result, "every_file_parsed").passed
    assert check(result, "embedding_per_chunk").passed


def test_a_step_whose_upstream_partition_was_never_built_fails_naming_it(instance, storage, hashing_embedder):
    folder = Path(storage.collections_root) / "fresh"
    folder.mkdir()
    (folder / "good.pdf").write_bytes(DEMO_PDF.read_bytes())
    selection = [ingestion.parsed_documents, ingestion.chunks, embeddings.chunk_embeddings]
    result = materialize_collection(
        instance, storage, hashing_embedder, "fresh", assets=selection, raise_on_error=False
    )
    assert failure(result) == (
        "parsed_documents",
        "collection 'fresh': `source_documents` has not been built; materialize it (or the whole collection) first.",
    )
    assert not rows(storage, "SELECT 1 FROM parsed_documents WHERE collection = 'fresh'")
    assert storage.vectors.read("fresh") is None
    assert not result.get_asset_materialization_events()


def test_an_empty_folder_fails_the_first_step_with_one_sentence(instance, storage, hashing_embedder):
    (Path(storage.collections_root) / "empty").mkdir()
    result = materialize_collection(instance, storage, hashing_embedder, "empty", raise_on_error=False)
    step, message = failure(result)
    assert step == "source_documents"
    assert message.startswith("collection 'empty': no usable documents: the folder ")
    assert message.endswith("has no PDF files. Put PDFs in it (sub-folders are read too) and build again.")


def test_a_folder_of_unusable_files_fails_parsing_with_each_reason(instance, storage, hashing_embedder):
    folder = Path(storage.collections_root) / "all-bad"
    folder.mkdir()
    make.write_pdf(folder / "cipher.pdf", make.english_pages(4), remap=make.caesar)
    make.write_pdf(folder / "title-only.pdf", ["Introduction"])
    (folder / "notes.pdf").write_bytes(b"these are my notes, not a PDF\n")

    result = materialize_collection(instance, storage, hashing_embedder, "all-bad", raise_on_error=False)
    step, message = failure(result)
    assert step == "parsed_documents"
    assert message == (
        "collection 'all-bad': no usable documents: 3 files, none usable (garbled: cipher.pdf; not_a_pdf: "
        "notes.pdf; too_little_text: title-only.pdf). Each file's reason and what to do are in this step's "
        "`problems` metadata."
    )
    # Each file's problem is recorded, so nothing is lost; nothing downstream ran.
    kinds = {row["file"]: row["kind"] for row in rows(storage, "SELECT file, kind FROM parse_problems")}
    assert kinds == {"cipher.pdf": "garbled", "title-only.pdf": "too_little_text", "notes.pdf": "not_a_pdf"}
    assert not rows(storage, "SELECT 1 FROM chunks")


def test_a_theme_graph_with_nothing_to_cluster_says_so(instance, storage, hashing_embedder):
    folder = Path(storage.collections_root) / "passage-only"
    folder.mkdir()
    (folder / "good.pdf").write_bytes(DEMO_PDFS_BY_SIZE[0].read_bytes())
    config = {"ops": {"chunks": {"config": {"profiles": ["passage"]}}}}
    assets = [*INGESTION_ASSETS, themes.theme_graph]
    result = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "passage-only",
        assets=assets,
        run_config=config,
        raise_on_error=False,
    )
    step, message = failure(result)
    assert step == "theme_graph"
    assert message.startswith("collection 'passage-only': nothing to cluster: no section chunks")
