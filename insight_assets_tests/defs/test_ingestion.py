"""Materialize the ingestion assets on real PDFs: the demo collection, broken files, reruns."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import shutil
from pathlib import Path

import dagster as dg
import pytest

from insight_assets.defs.resources import EmbedderResource, StorageResource
from insight_assets_tests.conftest import DEMO_COLLECTION, DEMO_PDFS_BY_SIZE, add_collection
from insight_assets_tests.defs.helpers import check, materialize_collection, metadata

DEMO_PDFS = DEMO_PDFS_BY_SIZE


def count(storage: StorageResource, table: str, collection: str) -> int:
    return storage.warehouse.rows(f"SELECT count(*) AS n FROM {table} WHERE collection = ?", [collection])[0][
        "n"
    ]


def profile_count(storage: StorageResource, collection: str, profile: str) -> int:
    return storage.warehouse.rows(
        "SELECT count(*) AS n FROM chunks WHERE collection = ? AND profile = ?", [collection, profile]
    )[0]["n"]


def vector_keys(storage: StorageResource, collection: str) -> set[tuple[str, str]]:
    table = storage.vectors.read(collection, ["profile", "chunk_id"])
    return set(zip(table.column("profile").to_pylist(), table.column("chunk_id").to_pylist()))


def chunk_keys(storage: StorageResource, collection: str) -> set[tuple[str, str]]:
    rows = storage.warehouse.rows("SELECT profile, chunk_id FROM chunks WHERE collection = ?", [collection])
    return {(row["profile"], row["chunk_id"]) for row in rows}


def test_demo_collection_builds_documents_chunks_and_vectors(instance, storage, hashing_embedder):
    add_collection(storage, "demo", DEMO_PDFS)
    result = materialize_collection(instance, storage, hashing_embedder, "demo")

    assert metadata(result, "source_documents")["dagster/row_count"] == 5
    parsed = metadata(result, "parsed_documents")
    assert parsed["dagster/row_count"] == 5
    assert parsed["files_with_errors"] == 0
    titles = [
        row["title"]
        for row in storage.warehouse.rows("SELECT title FROM parsed_documents WHERE collection='demo'")
    ]
    assert any("SPECTER" in title for title in titles)

    profiles = {
        row["profile"]: row
        for row in storage.warehouse.rows(
            "SELECT profile, count(*) AS n, max(token_count) AS biggest FROM chunks WHERE collection='demo' GROUP BY profile"
        )
    }
    assert set(profiles) == {"section", "passage"}
    assert profiles["section"]["biggest"] <= 2000 and profiles["passage"]["biggest"] <= 150
    assert profiles["passage"]["n"] > 5 * profiles["section"]["n"]

    # Every chunk has exactly one vector, keyed by (profile, chunk_id), all from one variant.
    assert vector_keys(storage, "demo") == chunk_keys(storage, "demo")
    assert set(storage.vectors.read("demo", ["variant"]).column("variant").to_pylist()) == {"hashing:bow:384"}
    assert check(result, "no_empty_chunks").passed
    assert check(result, "embedding_per_chunk").passed
    assert check(result, "every_file_parsed").passed


def test_broken_pdfs_become_problem_rows_and_the_rest_goes_on(instance, storage, hashing_embedder, corpus):
    bad = sorted((corpus / "bad").glob("*.pdf"))
    add_collection(storage, "mixed", bad + DEMO_PDFS[:1])
    result = materialize_collection(instance, storage, hashing_embedder, "mixed")
    assert result.success

    problems = storage.warehouse.rows(
        "SELECT file, kind, severity, message FROM parse_problems WHERE collection='mixed'"
    )
    errors = {row["file"]: row["kind"] for row in problems if row["severity"] == "error"}
    assert errors["not-a-pdf_qpdf-bad1.pdf"] == "not_a_pdf"
    assert errors["encrypted-user-password_unstructured.pdf"] == "encrypted"
    assert errors["zero-pages_qpdf-empty.pdf"] == "zero_pages"
    assert errors["scanned-image-only_docling-ocr-test.pdf"] == "scanned"
    assert "truncated-derived_1706.03762_first-half-bytes.pdf" in errors
    assert all(row["message"] for row in problems)

    documents = {
        row["file"]
        for row in storage.warehouse.rows("SELECT file FROM parsed_documents WHERE collection='mixed'")
    }
    assert DEMO_PDFS[0].name in documents
    assert "huge-page-count_619-pages_unstructured-DA.pdf" in documents
    assert not documents & set(errors)

    evaluation = check(result, "every_file_parsed")
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.WARN
    assert metadata(result, "parsed_documents")["files_with_errors"] == len(errors)
    assert vector_keys(storage, "mixed") == chunk_keys(storage, "mixed")
    # The smoke-test embedder runs no model, and so keeps no token vectors for the reranker either.
    assert metadata(result, "chunk_embeddings")["token_vectors"].startswith("not kept")


def test_reruns_recompute_only_what_changed(instance, storage, hashing_embedder):
    folder = add_collection(storage, "inc", DEMO_PDFS[:2])
    first = materialize_collection(instance, storage, hashing_embedder, "inc")
    assert metadata(first, "parsed_documents")["documents_parsed"] == 2
    # The model reads the passage chunks; each section chunk is pooled from the passage vectors it covers.
    first_embedded = metadata(first, "chunk_embeddings")["chunks_embedded"]
    assert first_embedded == profile_count(storage, "inc", "passage")
    assert metadata(first, "chunk_embeddings")["chunks_pooled"] == profile_count(storage, "inc", "section")
    # The chunk text is under a full-text index, built with the table.
    assert metadata(first, "chunk_embeddings")["text_index"] == "rebuilt"
    assert storage.vectors.has_text_index("inc")
    some_chunk = storage.warehouse.rows("SELECT chunk_id, text FROM chunks WHERE collection = 'inc' LIMIT 1")[
        0
    ]
    rare_words = " ".join(sorted(set(some_chunk["text"].split()), key=len)[-3:])
    assert some_chunk["chunk_id"] in [
        hit for hit, _ in storage.vectors.text_search("inc", rare_words, "true", 50)
    ]

    vectors_version = storage.vectors.db.open_table(storage.vectors.table_name("inc")).version
    unchanged = materialize_collection(instance, storage, hashing_embedder, "inc")
    # Nothing changed, so nothing is redone or rewritten: each step reuses its build.
    for step in ("parsed_documents", "chunks", "chunk_embeddings"):
        assert metadata(unchanged, step)["build"].startswith("reused: nothing it reads changed"), step
    assert metadata(unchanged, "chunks")["rechunked"] is False
    assert storage.vectors.db.open_table(storage.vectors.table_name("inc")).version == vectors_version
    assert metadata(unchanged, "chunks")["dagster/row_count"] == count(storage, "chunks", "inc")
    assert metadata(unchanged, "parsed_documents")["documents_parsed"] == 0
    assert metadata(unchanged, "chunk_embeddings")["chunks_embedded"] == 0

    # Its vectors deleted behind its back, the embedding step builds them again, from the model.
    storage.vectors.db.drop_table(storage.vectors.table_name("inc"))
    restored = materialize_collection(instance, storage, hashing_embedder, "inc")
    assert (
        metadata(restored, "chunk_embeddings")["build"] == "built: its outputs outside the warehouse are gone"
    )
    assert metadata(restored, "chunk_embeddings")["chunks_embedded"] == first_embedded
    assert metadata(restored, "chunks")["build"].startswith("reused")

    shutil.copyfile(DEMO_PDFS[2], folder / DEMO_PDFS[2].name)
    added = materialize_collection(instance, storage, hashing_embedder, "inc")
    assert metadata(added, "chunks")["rechunked"] is True
    assert metadata(added, "parsed_documents")["documents_parsed"] == 1
    assert metadata(added, "parsed_documents")["documents_reused"] == 2
    new_doc = storage.warehouse.rows(
        "SELECT doc_id FROM source_documents WHERE collection='inc' AND file=?", [DEMO_PDFS[2].name]
    )[0]["doc_id"]
    new_chunks = storage.warehouse.rows(
        "SELECT count(*) AS n FROM chunks WHERE collection='inc' AND doc_id=? AND profile='passage'",
        [new_doc],
    )[0]["n"]
    assert metadata(added, "chunk_embeddings")["chunks_embedded"] == new_chunks

    (folder / DEMO_PDFS[0].name).unlink()
    removed_doc = storage.warehouse.rows(
        "SELECT doc_id FROM source_documents WHERE collection='inc' AND file=?", [DEMO_PDFS[0].name]
    )[0]["doc_id"]
    materialize_collection(instance, storage, hashing_embedder, "inc")
    for table in ("source_documents", "parsed_documents", "parsed_pages", "chunks"):
        assert not storage.warehouse.rows(
            f"SELECT 1 FROM {table} WHERE collection='inc' AND doc_id=?", [removed_doc]
        )
    doc_ids = set(storage.vectors.read("inc", ["doc_id"]).column("doc_id").to_pylist())
    assert removed_doc not in doc_ids and new_doc in doc_ids

    before = chunk_keys(storage, "inc")
    shas_before = {
        row["text_sha"]
        for row in storage.warehouse.rows("SELECT text_sha FROM chunks WHERE collection='inc'")
    }
    rechunked = materialize_collection(
        instance,
        storage,
        hashing_embedder,
        "inc",
        run_config={"ops": {"chunks": {"config": {"passage_target_tokens": 120}}}},
    )
    after = chunk_keys(storage, "inc")
    assert {key for key in after if key[0] == "section"} == {key for key in before if key[0] == "section"}
    assert {key for key in after if key[0] == "passage"} != {key for key in before if key[0] == "passage"}
    # Only texts never embedded before are embedded: unchanged chunks keep their vectors.
    new_texts = {
        row["text_sha"]
        for row in storage.warehouse.rows("SELECT text_sha FROM chunks WHERE collection='inc'")
    } - shas_before
    assert metadata(rechunked, "chunk_embeddings")["chunks_embedded"] == len(new_texts) > 0
    assert (
        storage.warehouse.rows(
            "SELECT max(token_count) AS m FROM chunks WHERE collection='inc' AND profile='passage'"
        )[0]["m"]
        <= 120
    )
    assert vector_keys(storage, "inc") == after


def _materialize_in_subprocess(storage_fields: dict, collection: str) -> int:
    with dg.DagsterInstance.ephemeral() as instance:
        storage = StorageResource(**storage_fields)
        result = materialize_collection(instance, storage, EmbedderResource(provider="hashing"), collection)
        return count(storage, "chunks", collection) if result.success else -1


def test_two_collections_built_at_once_keep_each_others_rows(storage, tmp_path):
    add_collection(storage, "left", DEMO_PDFS[:2])
    add_collection(storage, "right", DEMO_PDFS[2:4])
    fields = {
        "collections_root": storage.collections_root,
        "warehouse_path": storage.warehouse_path,
        "lancedb_uri": storage.vectors_uri,
    }
    # Separate processes, as Dagster's multiprocess executor runs them; spawned, because LanceDB's
    # runtime does not survive a fork.
    spawn = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=spawn) as pool:
        left, right = pool.map(_materialize_in_subprocess, [fields, fields], ["left", "right"])
    assert left > 0 and right > 0
    assert count(storage, "chunks", "left") == left and count(storage, "chunks", "right") == right
    assert (
        count(storage, "parsed_documents", "left") == 2 and count(storage, "parsed_documents", "right") == 2
    )
    assert vector_keys(storage, "left") == chunk_keys(storage, "left")
    assert vector_keys(storage, "right") == chunk_keys(storage, "right")


@pytest.mark.parametrize("key", ["..", "../escape", "a/b"])
def test_a_partition_key_that_escapes_the_root_is_refused(instance, storage, hashing_embedder, key):
    result = materialize_collection(instance, storage, hashing_embedder, key, raise_on_error=False)
    assert not result.success
    failure = next(event for event in result.all_events if event.event_type_value == "STEP_FAILURE")
    assert "is refused" in failure.step_failure_data.user_failure_data.description
    assert not Path(storage.warehouse_path).exists() or count(storage, "source_documents", key) == 0


def test_a_missing_collection_folder_fails_with_a_clear_message(instance, storage, hashing_embedder):
    result = materialize_collection(instance, storage, hashing_embedder, "nowhere", raise_on_error=False)
    failure = next(event for event in result.all_events if event.event_type_value == "STEP_FAILURE")
    assert "has no folder" in failure.step_failure_data.user_failure_data.description


def test_preview_lists_every_file_with_pages_chunks_and_problems(instance, storage, hashing_embedder, corpus):
    add_collection(storage, "preview", [DEMO_PDFS[0], corpus / "bad" / "not-a-pdf_qpdf-bad1.pdf"])
    result = materialize_collection(instance, storage, hashing_embedder, "preview")
    lines = metadata(result, "chunks")["preview"].splitlines()
    assert lines[0] == "| file | pages | characters | section chunks | passage chunks | problems |"
    bad = next(line for line in lines if "not-a-pdf" in line)
    good = next(line for line in lines if DEMO_PDFS[0].name in line)
    assert "not_a_pdf (error)" in bad
    cells = [cell.strip() for cell in good.strip("|").split("|")]
    assert int(cells[1]) > 5 and int(cells[3]) > 0 and int(cells[4]) > int(cells[3]) and cells[5] == "-"


def test_an_invalid_chunk_size_fails_with_the_reason(instance, storage, hashing_embedder):
    add_collection(storage, "cfg", DEMO_PDFS[:1])
    config = {"ops": {"chunks": {"config": {"passage_target_tokens": 30, "passage_overlap_tokens": 20}}}}
    result = materialize_collection(
        instance, storage, hashing_embedder, "cfg", run_config=config, raise_on_error=False
    )
    failure = next(event for event in result.all_events if event.event_type_value == "STEP_FAILURE")
    assert failure.step_key == "chunks"
    assert "Invalid chunking config" in failure.step_failure_data.user_failure_data.description


def test_a_vector_table_read_back_in_another_order_counts_as_unchanged():
    import pyarrow as pa

    from insight_assets.defs.ingestion.embeddings import _same_rows

    rows = [
        {"profile": "passage", "chunk_id": "a", "text_sha": "1", "variant": "v", "pooled_from": None, "text": "A",
         "vector": [1.0]},
        {"profile": "section", "chunk_id": "b", "text_sha": "2", "variant": "v", "pooled_from": "passage",
         "text": "B", "vector": [0.5]},
    ]  # fmt: skip
    written = pa.Table.from_pylist(rows)
    assert _same_rows(pa.Table.from_pylist(rows[::-1]), written)
    assert not _same_rows(pa.Table.from_pylist([rows[0], {**rows[1], "text_sha": "3"}]), written)
    # A table from before the full-text index had no text column: it is written again.
    assert not _same_rows(pa.Table.from_pylist(rows).drop_columns(["text"]), written)


def test_embedding_batches_that_keep_failing_become_error_rows_and_a_rerun_retries_only_them(
    instance, storage, hashing_embedder
):
    from insight_assets_tests.fake_model_server import Failure, FakeModelServer, Reply

    server = FakeModelServer().start()
    server.default = Reply("")  # every embedding request is answered from its own texts
    # Every batch holding a passage about hard negatives gets a 500 on each try (quick retries).
    server.poison_embeddings("hard negative", Failure(500, "model crashed", headers={"retry-after-ms": "1"}))
    embedder = EmbedderResource(
        provider="openai-compatible", model="nomic-embed-text", base_url=f"{server.url}/v1", batch_size=8
    )
    try:
        add_collection(storage, "flaky", [DEMO_COLLECTION / "2020.acl-main.207_specter.pdf"])
        first = materialize_collection(instance, storage, embedder, "flaky")
        failed_batches = [
            r.body["input"] for r in server.requests if any("hard negative" in t for t in r.body["input"])
        ]
        failed_texts = {text for batch in failed_batches for text in batch}

        assert first.success
        report = metadata(first, "chunk_embeddings")
        errors = storage.warehouse.rows(
            "SELECT profile, chunk_id, text_sha, error FROM embedding_errors WHERE collection = 'flaky'"
        )
        chunks = storage.warehouse.rows(
            "SELECT profile, chunk_id, text FROM chunks WHERE collection = 'flaky'"
        )
        passage_failed = {
            row["chunk_id"] for row in chunks if row["profile"] == "passage" and row["text"] in failed_texts
        }
        assert {row["chunk_id"] for row in errors if row["profile"] == "passage"} == passage_failed
        assert all("model crashed" in row["error"] for row in errors)
        # A section chunk pooled from a failed passage chunk has no vector either, and says why.
        assert all(
            row["error"].startswith("pooled from passage chunk")
            for row in errors
            if row["profile"] == "section"
        )
        assert report["chunks_failed"] == len(errors) > 0
        # Everything else is embedded and stored.
        assert vector_keys(storage, "flaky") == chunk_keys(storage, "flaky") - {
            (r["profile"], r["chunk_id"]) for r in errors
        }
        evaluation = check(first, "embedding_per_chunk")
        assert not evaluation.passed and evaluation.metadata["chunks_failed"].value == len(errors)

        server.poisoned.clear()
        server.requests.clear()
        second = materialize_collection(instance, storage, embedder, "flaky")
        retried = {text for request in server.requests for text in request.body["input"]}
        assert retried == {row["text"] for row in chunks if row["chunk_id"] in passage_failed}
        assert metadata(second, "chunk_embeddings")["chunks_embedded"] == len(passage_failed)
        assert not storage.warehouse.rows("SELECT 1 FROM embedding_errors WHERE collection = 'flaky'")
        assert vector_keys(storage, "flaky") == chunk_keys(storage, "flaky")
        assert check(second, "embedding_per_chunk").passed
    finally:
        server.stop()


def test_an_embedding_service_that_fails_every_batch_fails_the_step(instance, storage):
    from insight_assets_tests.fake_model_server import Failure, FakeModelServer

    server = FakeModelServer().start()
    server.default = Failure(503, "overloaded", headers={"retry-after-ms": "1"})
    embedder = EmbedderResource(provider="openai-compatible", model="m", base_url=f"{server.url}/v1")
    try:
        add_collection(storage, "down", DEMO_PDFS[:1])
        result = materialize_collection(instance, storage, embedder, "down", raise_on_error=False)
    finally:
        server.stop()
    failure = next(event for event in result.all_events if event.event_type_value == "STEP_FAILURE")
    assert failure.step_key == "chunk_embeddings"
    description = failure.step_failure_data.user_failure_data.description
    assert (
        description.startswith("collection 'down': no chunk could be embedded: all ")
        and "overloaded" in description
    )
