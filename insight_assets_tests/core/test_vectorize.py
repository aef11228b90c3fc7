"""Each text goes to the model once: passage chunks are embedded, section chunks pooled from them."""

from __future__ import annotations

import numpy as np
import pytest

from insight_assets.core.embedding.models import HashingEmbedder, LocalEmbedder
from insight_assets.core.embedding.vectorize import pooling_plan, vectorize_chunks
from insight_assets.core.ingestion.chunking import PROFILES
from insight_assets.core.ingestion.documents import ParsedDocument
from insight_assets.core.ingestion.ingest import chunk_documents
from insight_assets.core.ingestion.pdf import parse_pdf
from insight_assets_tests.conftest import DEMO_COLLECTION

PARAGRAPH = (
    "Graph neural networks pass messages along edges. Each node aggregates its neighbours' states. "
    "Attention weights decide how much each neighbour counts. Deeper stacks see wider neighbourhoods. "
)


def rows_for(documents, profiles=("section", "passage")) -> list[dict]:
    chunks = chunk_documents(documents, [PROFILES[name] for name in profiles])
    return [
        {
            "profile": c.profile,
            "chunk_id": c.chunk_id,
            "doc_id": c.doc_id,
            "text": c.text,
            "text_sha": c.text_sha,
            "char_start": c.char_start,
            "char_end": c.char_end,
            "token_count": c.token_count,
        }
        for c in chunks
    ]


def document(doc_id: str = "doc", repeats: int = 120) -> ParsedDocument:
    return ParsedDocument(doc_id=doc_id, file=f"{doc_id}.pdf", page_texts=[PARAGRAPH * (repeats // 2)] * 2)


def vectors_by_profile(outcome) -> dict[str, np.ndarray]:
    table = outcome.table
    matrix = np.stack(table.column("vector").to_numpy(zero_copy_only=False))
    profiles = np.array(table.column("profile").to_pylist())
    return {name: matrix[profiles == name] for name in set(profiles)}


def test_fine_chunks_are_nested_inside_coarse_chunks():
    rows = rows_for([document()])
    coarse = [r for r in rows if r["profile"] == "section"]
    fine = [r for r in rows if r["profile"] == "passage"]
    assert len(coarse) >= 2
    for row in fine:
        assert any(c["char_start"] <= row["char_start"] and row["char_end"] <= c["char_end"] for c in coarse)


def test_coarse_chunks_are_pooled_and_only_fine_texts_reach_the_model():
    rows = rows_for([document()])
    embedder = HashingEmbedder()
    outcome = vectorize_chunks("c", rows, embedder, None)
    fine = [r for r in rows if r["profile"] == "passage"]
    assert outcome.pooled == sum(r["profile"] == "section" for r in rows)
    assert outcome.embedded == len({r["text_sha"] for r in fine})
    assert outcome.words_embedded == sum(
        len(t.split()) for t in {r["text_sha"]: r["text"] for r in fine}.values()
    )
    assert set(outcome.table.column("pooled_from").to_pylist()) == {"passage", ""}

    # A pooled vector is the token-weighted mean of the fine vectors inside its span.
    first = next(r for r in rows if r["profile"] == "section")
    inside = [
        r for r in fine if first["char_start"] <= r["char_start"] and r["char_end"] <= first["char_end"]
    ]
    expected = np.sum([r["token_count"] * embedder.embed([r["text"]])[0] for r in inside], axis=0)
    expected /= np.linalg.norm(expected)
    assert np.allclose(vectors_by_profile(outcome)["section"][0], expected, atol=1e-5)


def test_a_rerun_reuses_model_vectors_and_recomputes_pooled_ones():
    rows = rows_for([document()])
    first = vectorize_chunks("c", rows, HashingEmbedder(), None)
    again = vectorize_chunks("c", rows, HashingEmbedder(), first.table)
    assert again.embedded == 0 and again.words_embedded == 0
    assert again.reused == sum(r["profile"] == "passage" for r in rows) and again.pooled == first.pooled
    assert np.allclose(vectors_by_profile(again)["section"], vectors_by_profile(first)["section"])


def test_the_local_model_gives_the_token_vectors_of_what_it_embedded_and_a_rerun_none():
    rows = rows_for([document(repeats=8)])
    passages = {r["text"] for r in rows if r["profile"] == "passage"}
    outcome = vectorize_chunks("c", rows, LocalEmbedder(), None, with_token_vectors=True)
    assert set(outcome.token_vectors) == passages  # a section is pooled, never read by the model
    assert all(tokens.ndim == 2 and tokens.shape[1] == 384 for tokens in outcome.token_vectors.values())
    assert (
        vectorize_chunks("c", rows, LocalEmbedder(), outcome.table, with_token_vectors=True).token_vectors
        == {}
    )
    assert vectorize_chunks("c", rows, HashingEmbedder(), None, with_token_vectors=True).token_vectors == {}


def test_without_the_fine_profile_coarse_chunks_are_embedded_directly():
    rows = rows_for([document()], profiles=("section",))
    outcome = vectorize_chunks("c", rows, HashingEmbedder(), None)
    assert outcome.pooled == 0 and outcome.embedded == len(rows)
    assert set(outcome.table.column("pooled_from").to_pylist()) == {""}


def test_a_coarse_chunk_the_fine_chunks_barely_cover_is_not_pooled():
    fine_rows = {"doc": [{"char_start": 0, "char_end": 50, "token_count": 10, "_position": 0}]}
    coarse = {"doc_id": "doc", "char_start": 0, "char_end": 1000}
    assert pooling_plan(coarse, fine_rows, {"doc": [0]}) is None
    covered = {"doc_id": "doc", "char_start": 0, "char_end": 52}
    assert pooling_plan(covered, fine_rows, {"doc": [0]}) == [(0, 10.0)]


@pytest.mark.parametrize("name", ["2020.acl-main.207_specter.pdf"])
def test_pooled_vectors_equal_embedding_the_coarse_text_directly(name):
    """Pooling is exact: the model reading the 2,000-token chunk gives the same vector."""
    parsed = parse_pdf(DEMO_COLLECTION / name).document
    rows = rows_for([parsed])
    embedder = LocalEmbedder(precision="fp32")
    outcome = vectorize_chunks("c", rows, embedder, None)
    coarse_texts = [r["text"] for r in rows if r["profile"] == "section"]
    direct = embedder.embed(coarse_texts)
    cosines = (vectors_by_profile(outcome)["section"] * direct).sum(axis=1)
    assert cosines.min() > 0.9999


def test_a_change_of_embedder_variant_re_embeds_everything():
    rows = rows_for([document()])
    first = vectorize_chunks("c", rows, HashingEmbedder(dimension=384), None)
    switched = vectorize_chunks("c", rows, HashingEmbedder(dimension=256), first.table)
    assert switched.reused == 0 and switched.embedded == first.embedded
    assert set(switched.table.column("variant").to_pylist()) == {"hashing:bow:256"}
