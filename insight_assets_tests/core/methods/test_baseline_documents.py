"""A paper added to the collection leaves the baselines of the questions it does not touch as they
were (``baseline_documents: kept``), so their prompts, insights and judgements are the last build's;
``current`` reads the collection as it is now, as the paper's one-build protocol does."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from insight_assets.core.curation import QAPair
from insight_assets.core.llm import LLMClient, LLMSettings
from insight_assets.core.methods.insightgen import run_insightgen, store
from insight_assets.core.methods.insightgen.baseline_documents import rows
from insight_assets.core.methods.insightgen.selection import ClusterIndex
from insight_assets.core.methods.insightgen.settings import InsightsSettings
from insight_assets.core.retrieval.index import ChunkRecord, CollectionIndex
from insight_assets.core.storage.stores import Warehouse
from insight_assets_tests.core.test_selection import make_index, unit

TOPICS = [
    "Quantized attention kernels cut memory traffic during decoding on commodity accelerators.",
    "Calibration data choice changes which outlier channels keep higher precision weights.",
    "Sparse expert routing balances load across devices while keeping tokens on their experts.",
]
METHODS = ["direct", "cot", "vector_topk"]
PAIR = QAPair("q1", "How do quantized kernels save memory?", "They move fewer bytes per decoded token.")


def chunk(chunk_id: str, doc_id: str, index: int, text: str) -> ChunkRecord:
    return ChunkRecord(chunk_id, doc_id, index, text, 100)


def collection(chunks: list[ChunkRecord], vectors: np.ndarray) -> CollectionIndex:
    labels = {c.chunk_id: f"{c.doc_id}, p. 1" for c in chunks}
    return CollectionIndex("section", chunks, vectors, labels, {c.doc_id: c.doc_id for c in chunks})


@pytest.fixture
def papers():
    """Two papers in a theme graph of three clusters (doc-b: clusters 0 and 1, doc-c: 2), and a third
    paper, doc-a, whose file sorts first and whose chunks joined no theme near the question."""
    centroids = [unit(np.eye(8)[axis]) for axis in range(3)]
    hand_made = make_index(centroids, [(0, 1), (1, 2)])
    ids = list(hand_made.graph.chunk_ids)
    texts = {cid: f"{TOPICS[int(cid[1])]} Finding {cid[-1]} of cluster {cid[1]}." for cid in ids}
    cluster_index = ClusterIndex(hand_made.graph, texts, dict.fromkeys(ids, 100))
    old = [
        chunk(cid, "doc-c" if cid.startswith("c2") else "doc-b", n, texts[cid]) for n, cid in enumerate(ids)
    ]
    old_vectors = np.array([centroids[int(cid[1])] for cid in ids], dtype=np.float32)
    new = [chunk(f"a-{n}", "doc-a", n, f"{TOPICS[0]} Newly added result {n}.") for n in range(2)]
    new_vectors = np.array([unit(np.eye(8)[0] + 0.1 * np.eye(8)[5])] * 2, dtype=np.float32)
    before = collection(old, old_vectors)
    after = collection(new + old, np.vstack([new_vectors, old_vectors]))
    return cluster_index, before, after


def embed(texts: list[str]) -> np.ndarray:
    return np.array([unit(np.eye(8)[0] + 0.05 * np.eye(8)[1])] * len(texts), dtype=np.float32)


def insights_of(pair, index, cluster_index, settings, earlier=None):
    with LLMClient(LLMSettings(provider="offline")) as client:
        result = run_insightgen(client, [pair], index, cluster_index, embed, settings, earlier)
    contexts = {c.method: c for c in result.contexts}
    runs = {run.method: run.insights for run in result.outcome.runs}
    return result, contexts, runs


def stored(tmp_path, result) -> dict:
    """The documents each question's baselines read, through the warehouse table and back."""
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.replace_partition("c", {"insight_pools": pa.Table.from_pylist(rows("c", result.documents))})
    return store.baseline_documents(warehouse, "c")


def docs_of(context, index: CollectionIndex) -> set[str]:
    by_id = {c.chunk_id: c.doc_id for c in index.chunks}
    return {by_id[chunk_id] for chunk_id in context.chunk_ids}


def test_an_unchanged_questions_baselines_read_what_they_read_before_a_paper_was_added(tmp_path, papers):
    cluster_index, before, after = papers
    settings = InsightsSettings(methods=METHODS, token_budget=250)
    first, first_contexts, first_insights = insights_of(PAIR, before, cluster_index, settings)
    assert first.documents["q1"].doc_ids == {"doc-b", "doc-c"}
    assert docs_of(first_contexts["direct"], before) == {"doc-b", "doc-c"}

    second, contexts, insights = insights_of(PAIR, after, cluster_index, settings, stored(tmp_path, first))

    assert second.documents["q1"].doc_ids == {"doc-b", "doc-c"}
    for method in METHODS:
        assert (contexts[method].chunk_ids, contexts[method].texts) == (
            first_contexts[method].chunk_ids,
            first_contexts[method].texts,
        )
        assert insights[method] == first_insights[method]

    # The paper's protocol: the collection as it is now, the new paper's file read first by CoT.
    current = settings.model_copy(update={"baseline_documents": "current"})
    now, now_contexts, _ = insights_of(PAIR, after, cluster_index, current, stored(tmp_path, first))
    assert now.documents["q1"].doc_ids == {"doc-a", "doc-b", "doc-c"}
    assert "doc-a" in docs_of(now_contexts["direct"], after)
    assert now_contexts["cot"].chunk_ids[0] == "a-0"


def test_a_changed_answer_or_a_paper_gone_reads_the_collection_as_it_is_now(tmp_path, papers):
    cluster_index, before, after = papers
    settings = InsightsSettings(methods=METHODS, token_budget=250)
    first, _, _ = insights_of(PAIR, before, cluster_index, settings)
    earlier = stored(tmp_path, first)

    answered_again = QAPair(PAIR.question_id, PAIR.question, "Fewer bytes move, and attention is fused.")
    changed, contexts, _ = insights_of(answered_again, after, cluster_index, settings, earlier)
    assert changed.documents["q1"].doc_ids == {"doc-a", "doc-b", "doc-c"}
    assert "doc-a" in docs_of(contexts["direct"], after)

    without_c = [c for c in after.chunks if c.doc_id != "doc-c"]
    rows_kept = [n for n, c in enumerate(after.chunks) if c.doc_id != "doc-c"]
    shrunk = collection(without_c, after.vectors[rows_kept])
    gone, contexts, _ = insights_of(PAIR, shrunk, cluster_index, settings, earlier)
    assert gone.documents["q1"].doc_ids == {"doc-a", "doc-b"}
    assert docs_of(contexts["direct"], shrunk) == {"doc-a", "doc-b"}
