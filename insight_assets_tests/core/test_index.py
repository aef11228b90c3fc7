"""The shared index: nearest chunks and documents by cosine, the same for every method."""

from __future__ import annotations

import numpy as np

from insight_assets.core.embedding.vectors import nearest_rows
from insight_assets.core.retrieval.index import ChunkRecord, CollectionIndex


def test_nearest_rows_are_by_cosine_nearest_first_ties_to_the_earlier_row():
    vectors = np.array([[1.0, 0.0], [0.0, 3.0], [2.0, 0.0], [1.0, 1.0]], dtype=np.float32)
    # Rows 0 and 2 point the same way (a tie at cosine 1): the earlier comes first; length does not count.
    assert nearest_rows(vectors, np.array([5.0, 0.0]), 3) == [0, 2, 3]
    assert nearest_rows(vectors, np.array([0.0, 1.0]), 1) == [1]
    assert nearest_rows(vectors, np.array([1.0, 0.0]), 0) == []
    assert nearest_rows(vectors, np.array([1.0, 0.0]), 10) == [0, 2, 3, 1]


def index_of(doc_chunks: dict[str, list[list[float]]]) -> CollectionIndex:
    chunks, vectors = [], []
    for doc_id, rows in doc_chunks.items():
        for position, vector in enumerate(rows):
            chunks.append(ChunkRecord(f"{doc_id}-{position}", doc_id, position, "text", 10))
            vectors.append(np.asarray(vector, dtype=np.float32) / np.linalg.norm(vector))
    return CollectionIndex(
        "passage", chunks, np.stack(vectors), {}, {doc_id: doc_id for doc_id in doc_chunks}
    )


def test_nearest_documents_compare_mean_chunk_vectors():
    index = index_of({"a": [[1, 0, 0], [0, 1, 0]], "b": [[0, 0, 1]], "c": [[1, 0.1, 0]]})
    query = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    assert index.nearest_documents(query, 2) == ["c", "a"]
    assert index.nearest_documents(query, 3, among={"a", "b"}) == ["a", "b"]
    assert [chunk.chunk_id for chunk in index.nearest(query, 2)] == ["a-0", "c-0"]
