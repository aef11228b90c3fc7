"""The retrieval layer on a small synthetic collection whose right answers are known."""

from __future__ import annotations

import hashlib
import json

import pyarrow as pa
import pytest

from insight_assets.core.embedding.models import LocalEmbedder
from insight_assets.core.embedding.vectorize import vectorize_chunks
from insight_assets.core.llm import LLMClient, LLMSettings
from insight_assets.core.retrieval import LateInteraction, RetrievalError, Retriever, rerank
from insight_assets.core.retrieval.search import RRF_K
from insight_assets.core.storage.stores import VectorStore, Warehouse
from insight_assets_tests.core.conftest import fake_openai_client
from insight_assets_tests.fake_model_server import Failure, Reply

COLLECTION = "synthetic"
# (document, title, chunk texts): each chunk is about one thing, so the right hit is known.
DOCUMENTS = [
    (
        "d-astro",
        "Observing Distant Galaxies",
        [
            "Telescopes collect faint light from galaxies billions of light years away.",
            "Redshift measurements reveal how fast a galaxy recedes from the observer.",
            "The QZRT calibration procedure corrects detector drift on the spectrograph.",
        ],
    ),
    (
        "d-cooking",
        "Home Baking",
        [
            "Knead the dough for ten minutes until it becomes smooth and elastic.",
            "Bake the loaf at a high temperature so that the crust turns golden brown.",
            "Sourdough bread rises slowly because wild yeast ferments the flour.",
        ],
    ),
    (
        "d-pets",
        "Living With Animals",
        [
            "The cat sat quietly on the warm windowsill in the afternoon sun.",
            "Dogs need daily walks and regular exercise to stay healthy.",
            "Goldfish live in tanks that must be cleaned every week.",
        ],
    ),
    (
        "d-ml",
        "Neural Network Training",
        [
            "Gradient descent updates the weights of a neural network to reduce the loss.",
            "Dropout randomly disables units during training to prevent overfitting.",
            "Learning rate schedules lower the step size as training progresses.",
        ],
    ),
]


def _chunk_rows() -> list[dict]:
    rows = []
    for doc_id, _, texts in DOCUMENTS:
        for index, text in enumerate(texts):
            rows.append(
                {
                    "collection": COLLECTION, "profile": "passage", "chunk_id": f"{doc_id}-{index}",
                    "doc_id": doc_id, "chunk_index": index, "text": text, "char_start": index * 100,
                    "char_end": index * 100 + len(text), "page_start": index + 1, "page_end": index + 1,
                    "token_count": len(text.split()), "text_sha": hashlib.sha256(text.encode()).hexdigest(),
                }
            )  # fmt: skip
    return rows


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


@pytest.fixture(scope="module")
def retriever(tmp_path_factory, embedder) -> Retriever:
    root = tmp_path_factory.mktemp("retrieval")
    warehouse, vectors = Warehouse(root / "warehouse.duckdb"), VectorStore(str(root / "lancedb"))
    rows = _chunk_rows()
    documents = [
        {"collection": COLLECTION, "doc_id": doc_id, "file": f"{doc_id}.pdf", "title": title}
        for doc_id, title, _ in DOCUMENTS
    ]
    warehouse.replace_partition(
        COLLECTION,
        {"parsed_documents": pa.Table.from_pylist(documents), "chunks": pa.Table.from_pylist(rows)},
    )
    vectors.replace(COLLECTION, vectorize_chunks(COLLECTION, rows, embedder, None).table)
    vectors.build_text_index(COLLECTION)
    return Retriever.open(warehouse, vectors, COLLECTION, embedder, "passage")


def ids(hits) -> list[str]:
    return [hit.chunk_id for hit in hits]


def test_a_rare_acronym_is_found_by_lexical_and_hybrid_search(retriever):
    lexical = retriever.search("QZRT", k=3, mode="lexical")
    assert ids(lexical) == ["d-astro-2"]  # only one chunk has the word at all
    hybrid = retriever.search("QZRT", k=3, mode="hybrid")
    assert ids(hybrid)[0] == "d-astro-2"
    assert hybrid[0].found_by[-1] == "lexical" and hybrid[0].mode == "hybrid"


def test_a_paraphrase_is_found_by_dense_search_and_missed_by_lexical(retriever):
    query = "a kitten resting beside a sunny window"
    dense = retriever.search(query, k=3, mode="dense")
    assert dense[0].chunk_id == "d-pets-0"
    assert "d-pets-0" not in ids(retriever.search(query, k=3, mode="lexical"))


def test_hits_carry_where_they_come_from(retriever):
    (hit,) = retriever.search("Redshift measurements of galaxies", k=1, mode="dense")
    assert (hit.chunk_id, hit.doc_id, hit.title) == ("d-astro-1", "d-astro", "Observing Distant Galaxies")
    assert (hit.page_start, hit.page_end, hit.pages) == (2, 2, "p. 2")
    assert hit.text.startswith("Redshift") and hit.found_by == ("dense",) and 0 < hit.score <= 1


def test_hybrid_scores_are_reciprocal_rank_fusion_of_both_lists(retriever):
    query = "bread dough baking"
    dense = ids(retriever.search(query, k=12, mode="dense"))
    lexical = ids(retriever.search(query, k=12, mode="lexical"))
    expected = {}
    for ranking in (dense, lexical):
        for rank, chunk_id in enumerate(ranking, 1):
            expected[chunk_id] = expected.get(chunk_id, 0.0) + 1 / (RRF_K + rank)
    hybrid = retriever.search(query, k=12, mode="hybrid")
    assert {hit.chunk_id: round(hit.score, 6) for hit in hybrid} == {
        chunk_id: round(score, 6) for chunk_id, score in expected.items()
    }
    assert [hit.score for hit in hybrid] == sorted((hit.score for hit in hybrid), reverse=True)
    both = [hit for hit in hybrid if hit.chunk_id in dense and hit.chunk_id in lexical]
    assert both and all(hit.found_by == ("dense", "lexical") for hit in both)


@pytest.mark.parametrize("mode", ["dense", "lexical", "hybrid"])
def test_document_filters_hold_in_every_mode(retriever, mode):
    query = "training galaxies bread cat"
    only = retriever.search(query, k=10, mode=mode, documents={"d-ml", "d-pets"})
    assert only and {hit.doc_id for hit in only} <= {"d-ml", "d-pets"}
    without = retriever.search(query, k=20, mode=mode, exclude={"d-ml"})
    assert without and "d-ml" not in {hit.doc_id for hit in without}
    assert retriever.search(query, k=5, mode=mode, documents={"d-ml"}, exclude={"d-ml"}) == []


def test_bad_requests_say_what_is_wrong(retriever):
    with pytest.raises(RetrievalError, match="unknown retrieval mode 'fuzzy'"):
        retriever.search("anything", mode="fuzzy")
    with pytest.raises(RetrievalError, match="none of the documents nope"):
        retriever.search("anything", documents={"nope"})


def test_search_many_embeds_once_and_matches_single_searches(retriever):
    queries = ["dropout overfitting", "golden crust"]
    assert [ids(hits) for hits in retriever.search_many(queries, k=4)] == [
        ids(retriever.search(query, k=4)) for query in queries
    ]


def test_late_interaction_rerank_moves_the_relevant_passage_to_the_top(retriever):
    query = "How does dropout prevent overfitting during training?"
    candidates = retriever.search("neural network weights training steps", k=12, mode="dense")
    relevant = next(hit for hit in candidates if hit.chunk_id == "d-ml-1")
    planted = [hit for hit in candidates if hit.chunk_id != "d-ml-1"] + [relevant]  # last on purpose
    reranked = rerank(query, planted, top_n=3, reranker="late-interaction")
    assert reranked[0].chunk_id == "d-ml-1" and len(reranked) == 3
    assert reranked[0].reranker == "late-interaction" and reranked[0].retrieval_score == relevant.score
    # Whatever its cache holds, the reranker scores every candidate the same way.
    uncached = rerank(query, planted, top_n=3, late_interaction=LateInteraction(cache_size=0))
    assert [(hit.chunk_id, round(hit.score, 4)) for hit in uncached] == [
        (hit.chunk_id, round(hit.score, 4)) for hit in reranked
    ]


def test_llm_rerank_offline_rates_by_the_query_words_a_passage_holds(retriever):
    query = "sourdough yeast ferments flour"
    candidates = retriever.search("weights network galaxy", k=12, mode="dense")
    with LLMClient(LLMSettings(provider="offline")) as llm:
        reranked = rerank(query, candidates, top_n=3, reranker="llm", llm=llm)
    assert reranked[0].chunk_id == "d-cooking-2" and reranked[0].score == 5.0  # all four words


def test_llm_rerank_asks_a_hosted_model_in_batches_and_sinks_a_failed_batch(retriever, server):
    candidates = retriever.search("weights network galaxy", k=12, mode="dense")
    ratings = [{"id": f"P{n}", "relevance": 5 if n == 7 else 1} for n in range(1, 11)]
    server.queue(Reply(json.dumps({"ratings": ratings})), Failure(500))
    with fake_openai_client(server, settings={"max_concurrency": 1}) as llm:
        reranked = rerank("query", candidates, top_n=12, reranker="llm", llm=llm)
    assert len(server.requests) == 2  # 10 passages per call
    assert (
        "[P10]" in server.requests[0].last_user_text() and "[P11]" not in server.requests[0].last_user_text()
    )
    assert reranked[0].chunk_id == candidates[6].chunk_id and reranked[0].score == 5.0
    # The second batch failed: its two passages rate -1, below every rated one, but are kept.
    assert [hit.chunk_id for hit in reranked[-2:]] == [hit.chunk_id for hit in candidates[10:]]
    assert [hit.score for hit in reranked[-2:]] == [-1.0, -1.0]


def test_no_rerank_keeps_the_first_stage_order(retriever):
    hits = retriever.search("bread", k=5, mode="dense")
    assert rerank("bread", hits, top_n=2, reranker="none") == hits[:2]
