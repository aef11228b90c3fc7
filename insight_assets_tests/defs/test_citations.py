"""The citations asset on real papers that cite each other (the shared corpus's nlp-embeddings)."""

from __future__ import annotations

import dagster as dg

from insight_assets.defs.citations.assets import citations
from insight_assets.defs.ingestion.assets import parsed_documents, source_documents
from insight_assets_tests.conftest import DEMO_COLLECTION, add_collection
from insight_assets_tests.defs.helpers import check, materialize_collection, metadata

# Links checked by hand against the references sections (citing file stem -> cited file stem).
KNOWN_LINKS = [
    ("skip-thought-vectors", "distributed-representations-of-sentences-and-documents"),
    ("skip-thought-vectors", "efficient-estimation-of-word-representations-in-vector-space"),
    ("a-simple-but-tough-to-beat-baseline-for-sentence-embeddings", "skip-thought-vectors"),
    ("a-simple-but-tough-to-beat-baseline-for-sentence-embeddings", "towards-universal-paraphrastic-sentence-embeddings"),
    ("an-efficient-framework-for-learning-sentence-representations", "a-simple-but-tough-to-beat-baseline-for-sentence-embeddings"),
    ("hierarchical-softmax", "a-neural-probabilistic-language-model"),
    ("distributed-representations-of-sentences-and-documents", "hierarchical-softmax"),
    ("efficient-estimation-of-word-representations-in-vector-space", "a-neural-probabilistic-language-model"),
    ("enriching-word-vectors-with-subword-information", "finding-function-in-form-compositional-character-models"),
    ("towards-universal-paraphrastic-sentence-embeddings", "faruqui-and-dyer-2014-improving-vector-space-word-representations-using"),
    ("supervised-learning-of-universal-sentence-representations-from-natural-language-inference-", "learning-distributed-representations-of-sentences-from-unlabelled-data"),
    ("word2vec-parameter-learning-explained", "distributed-representations-of-words-and-phrases-and-their-compositionality"),
    ("universal-sentence-encoder", "skip-thought-vectors"),
    ("neural-word-embedding-as-implicit-matrix-factorization", "distributed-representations-of-words-and-phrases-and-their-compositionality"),
]  # fmt: skip

ASSETS = [source_documents, parsed_documents, citations]


def test_citations_link_the_papers_that_cite_each_other(instance, storage, hashing_embedder, corpus):
    pdfs = sorted((corpus / "nlp-embeddings").glob("*.pdf"))
    add_collection(storage, "emb", pdfs)
    result = materialize_collection(instance, storage, hashing_embedder, "emb", assets=ASSETS)

    stem = {
        row["doc_id"]: row["file"].removesuffix(".pdf")
        for row in storage.warehouse.rows(
            "SELECT doc_id, file FROM parsed_documents WHERE collection = 'emb'"
        )
    }
    edges = {
        (stem[row["citing_doc_id"]], stem[row["cited_doc_id"]])
        for row in storage.warehouse.rows("SELECT * FROM citations WHERE collection = 'emb'")
    }
    assert set(KNOWN_LINKS) <= edges
    assert all(citing != cited for citing, cited in edges)

    references = storage.warehouse.rows("SELECT * FROM paper_references WHERE collection = 'emb'")
    # A title that only looks like a collection paper's is not a link: Mnih and Teh's "A fast and simple
    # algorithm for training neural probabilistic language models" (another first author), Bengio et
    # al.'s 2006 "Neural probabilistic language models" (after the JMLR paper's 2003 publication line).
    for text, reason in [("fast and simple algorithm for training neural probabilistic", "first author 'mnih'"),
                         ("Gauvain, Jean-Luc. Neural probabilistic language models", "after the paper's publication")]:  # fmt: skip
        rows = [row for row in references if text in row["text"]]
        assert rows and all(row["cited_doc_id"] is None and reason in row["reason"] for row in rows)
    unmatched = [row for row in references if row["cited_doc_id"] is None]
    assert len(unmatched) > 10 * len(edges) / 2 and all(row["reason"] for row in unmatched)

    report = metadata(result, "citations")
    assert report["dagster/row_count"] == len(edges)
    assert report["references"] == len(references) and report["papers"] == len(pdfs)
    assert report["graph"].startswith("![citation graph](data:image/png;base64,")
    # Co-citation is a view on the edges: word2vec's two papers are cited together by several others.
    pairs = storage.warehouse.rows(
        "SELECT doc_a, doc_b, co_cited_by FROM co_citations WHERE collection = 'emb'"
    )
    word2vec = {"efficient-estimation-of-word-representations-in-vector-space",
                "distributed-representations-of-words-and-phrases-and-their-compositionality"}  # fmt: skip
    (together,) = [row for row in pairs if {stem[row["doc_a"]], stem[row["doc_b"]]} == word2vec]
    assert together["co_cited_by"] >= 5


def test_a_collection_without_readable_references_gets_no_links_and_a_warning_saying_why(
    instance, storage, hashing_embedder
):
    add_collection(storage, "one", sorted(DEMO_COLLECTION.glob("*.pdf"))[:2])
    assert materialize_collection(instance, storage, hashing_embedder, "one", assets=ASSETS[:2]).success
    # As if the papers had no references section.
    storage.warehouse.write(
        lambda connection: connection.execute(
            "UPDATE parsed_documents SET references_text = '' WHERE collection = 'one'"
        )
    )
    result = materialize_collection(instance, storage, hashing_embedder, "one", assets=[citations])
    assert metadata(result, "citations")["dagster/row_count"] == 0
    links = check(result, "citation_links")
    assert not links.passed and links.severity == dg.AssetCheckSeverity.WARN
    assert "none of its 2 parsed documents has a references section" in links.description
    assert storage.warehouse.rows("SELECT * FROM citations WHERE collection = 'one'") == []
