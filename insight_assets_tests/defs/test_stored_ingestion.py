"""What ingestion stores for the demo collection stays what it was when the reference was made.

Speed work on parsing, chunking or embedding must not change what is stored: the same chunk ids
(which hash the document, profile, span and text), the same texts, and vectors within 0.99 cosine of
the reference's (bfloat16 and fp32 runs of the bundled model agree to 0.9999; the reference holds
fp32 vectors as float16). The reference was written again for chunking version 4 (passages open
and end at words: an overlap moves up to 5 tokens to a word start, and a word hyphenated across a
page's boilerplate opens or ends none) with ``python -m insight_assets_tests.defs.test_stored_ingestion``; write it again only when a change of
what is stored is the point (a new parser or chunking version), and say so in the commit.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import dagster as dg
import numpy as np

from insight_assets.core.retrieval import LateInteraction
from insight_assets.core.retrieval.token_store import StoredTokens
from insight_assets.defs.resources import EmbedderResource, StorageResource
from insight_assets_tests.conftest import DEMO_COLLECTION, add_collection
from insight_assets_tests.defs.helpers import materialize_collection

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "demo_ingestion_reference.npz"
MIN_COSINE = 0.99


def stored_ingestion(storage: StorageResource, embedder: EmbedderResource) -> dict[tuple[str, str], tuple]:
    """``(profile, chunk_id) -> (text_sha, unit vector)`` of the demo, ingested into ``storage``."""
    add_collection(storage, "demo", sorted(DEMO_COLLECTION.glob("*.pdf")))
    with dg.DagsterInstance.ephemeral() as instance:
        materialize_collection(instance, storage, embedder, "demo")
    texts = {
        (row["profile"], row["chunk_id"]): row["text_sha"]
        for row in storage.warehouse.rows(
            "SELECT profile, chunk_id, text_sha FROM chunks WHERE collection = 'demo'"
        )
    }
    vectors = storage.vectors.read("demo", ["profile", "chunk_id", "vector"]).to_pylist()
    return {
        (row["profile"], row["chunk_id"]): (texts[row["profile"], row["chunk_id"]], row["vector"])
        for row in vectors
    }


def test_demo_chunks_and_vectors_equal_the_reference(storage):
    reference = np.load(REFERENCE)
    expected = {
        (profile, chunk_id): (text_sha, vector)
        for profile, chunk_id, text_sha, vector in zip(
            reference["profile"],
            reference["chunk_id"],
            reference["text_sha"],
            reference["vector"],
            strict=True,
        )
    }
    stored = stored_ingestion(storage, EmbedderResource())

    assert sorted(stored) == sorted(expected)
    assert all(stored[key][0] == expected[key][0] for key in expected)
    keys = sorted(expected)
    ours = np.array([stored[key][1] for key in keys], dtype=np.float32)
    theirs = np.array([expected[key][1] for key in keys], dtype=np.float32)
    theirs /= np.linalg.norm(theirs, axis=1, keepdims=True)
    cosines = (ours * theirs).sum(axis=1)
    assert cosines.min() >= MIN_COSINE, (
        f"{int((cosines < MIN_COSINE).sum())} vectors moved: min cosine {cosines.min():.4f}"
    )
    # The same forward passes kept the reranker's token vectors of every passage, as it computes them.
    passages = [
        row["text"]
        for row in storage.warehouse.rows(
            "SELECT DISTINCT text FROM chunks WHERE collection = 'demo' AND profile = 'passage'"
        )
    ]
    kept = StoredTokens.load(storage.vectors_uri, "demo")
    assert len(kept) == len(passages)
    reranker = LateInteraction(cache_size=0)
    for text, own in zip(passages[:5], reranker.token_vectors(passages[:5]), strict=True):
        rows = kept.get(text).astype(np.float32)
        assert rows.shape == own.shape and np.sum(rows * own.astype(np.float32), axis=1).min() > 0.98


def write_reference(root: Path) -> None:
    """Ingest the demo with fp32 vectors under ``root`` and write ``REFERENCE`` from it."""
    (root / "collections").mkdir(parents=True)
    storage = StorageResource(
        collections_root=str(root / "collections"),
        warehouse_path=str(root / "warehouse.duckdb"),
        lancedb_uri=str(root / "lancedb"),
    )
    stored = stored_ingestion(storage, EmbedderResource(precision="fp32"))
    keys = sorted(stored)
    np.savez_compressed(
        REFERENCE,
        profile=np.array([profile for profile, _ in keys]),
        chunk_id=np.array([chunk_id for _, chunk_id in keys]),
        text_sha=np.array([stored[key][0] for key in keys]),
        vector=np.array([stored[key][1] for key in keys], dtype=np.float16),
    )


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        write_reference(Path(folder))
