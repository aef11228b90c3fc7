"""Boilerplate is recognised from the text, kept out of chunks, and nothing a paper says is lost."""

from __future__ import annotations

from insight_assets.core.ingestion.boilerplate import find_boilerplate
from insight_assets.core.ingestion.chunking import PROFILES, chunk_document
from insight_assets.core.ingestion.documents import ParsedDocument

TITLE = "Sparse Retrieval for Long Documents: A Study"
FRONT = "Ada Lovelace† Alan Turing‡\n† Analytical Engines Ltd, London\n{ada,alan}@engines.example.org\n"
BODY = (
    "Abstract\nWe study sparse retrieval over long documents and find that splitting helps.\n"
    "1 Introduction\nLong documents defeat dense retrievers, thanks to their fixed input length. "
    "Our claim is supported by experiments on three benchmarks. We acknowledge that our sample is small.\n"
    "The data is at https://doi.org/10.5281/zenodo.5644302 for anyone to check the splitting.\n"
    "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics, pages 1–9\n"
    "July 5 - 10, 2020. ©2020 Association for Computational Linguistics\n"
    "2 Method\nWe split each document into passages and score each passage with BM25. "
    "Earlier work [3] scored whole documents.\n"
    "[1] A. Author and B. Author. 2019. Dense passage retrieval. In Proceedings of EMNLP.\n"
    "[2] C. Writer. 2020. Long documents. Journal of Retrieval, 12:1–20.\n"
    "3 Conclusion\nSplitting documents makes sparse retrieval competitive on long inputs.\n"
    "Acknowledgements\nWe thank the anonymous reviewers for their comments. "
    "This work was supported in part by NSF grant IIS-1234567.\n"
)
TEXT = f"{TITLE}\n{FRONT}{BODY}"


def spans_by_kind(text: str, sections=("1 Introduction", "2 Method", "3 Conclusion", "Acknowledgements")):
    found: dict[str, list[str]] = {}
    for span in find_boilerplate(text, len(text), title=TITLE, sections=sections):
        found.setdefault(span.kind, []).append(text[span.char_start : span.char_end])
    return found


def test_each_kind_is_found_from_the_text():
    found = spans_by_kind(TEXT)

    assert found["affiliations"] == [FRONT.rstrip("\n")]
    assert any(line.startswith("Proceedings of the 58th") for line in found["copyright"])
    assert any("©2020" in line for line in found["copyright"])
    assert any(
        span.startswith("[1] A. Author") and "Journal of Retrieval" in span for span in found["references"]
    )
    assert any(span.startswith("Acknowledgements\nWe thank") for span in found["acknowledgements"])


def test_a_venues_running_header_is_a_publication_stamp():
    text = (
        "Attention helps reading.\nPublished as a conference paper at ICLR 2017\nWe then train the model.\n"
    )
    assert spans_by_kind(text, ()) == {"copyright": ["Published as a conference paper at ICLR 2017"]}


def test_what_the_paper_says_is_not_taken_for_boilerplate():
    found = spans_by_kind(TEXT)
    marked = " ".join(text for texts in found.values() for text in texts)

    for content in (
        "thanks to their fixed input length",  # causal, nobody thanked
        "supported by experiments",  # no grant, no funder
        "We acknowledge that our sample is small",
        "https://doi.org/10.5281/zenodo.5644302 for anyone",  # a data DOI inside a sentence
        "Earlier work [3] scored whole documents",  # one citation is not a reference list
        "We study sparse retrieval",
    ):
        assert content not in marked, content


def test_thanks_and_funding_without_a_heading_are_sentences_of_their_own():
    text = (
        "Results hold across seeds. Finally, we thank the Semantic Scholar team for assisting with data access. "
        "KK was partly supported by a Google PhD Fellowship awarded in 2021. The method scales linearly.\n"
    )
    found = spans_by_kind(text, sections=())

    assert found == {
        "acknowledgements": ["Finally, we thank the Semantic Scholar team for assisting with data access."],
        "funding": ["KK was partly supported by a Google PhD Fellowship awarded in 2021."],
    }


def test_an_author_contributions_statement_is_credit_not_content():
    statement = (
        "Author Contributions:\nAda Lovelace led the project and wrote the paper. Alan Turing helped with "
        "obtaining human judgements, including piloting the task.\n"
    )
    text = (
        "Splitting makes sparse retrieval competitive.\n" + statement + "Appendix A\nMore results follow.\n"
    )
    found = spans_by_kind(text, sections=("Appendix A",))

    assert found == {"acknowledgements": [statement]}
    # "contributions" in a sentence is what the paper says.
    assert spans_by_kind("Our contributions are threefold: a method, a dataset and a study.\n", ()) == {}


def test_chunks_leave_boilerplate_out_and_keep_every_other_word():
    document = ParsedDocument(doc_id="d", file="d.pdf", page_texts=[TEXT], title=TITLE)
    document.boilerplate = find_boilerplate(
        document.text, document.body_end, title=TITLE, sections=["1 Introduction", "Acknowledgements"]
    )
    marked = [document.text[span.char_start : span.char_end] for span in document.boilerplate]

    for profile in PROFILES.values():
        chunks = chunk_document(document, profile)
        joined = " ".join(chunk.text for chunk in chunks)
        assert all(chunk.text == document.text[chunk.char_start : chunk.char_end] for chunk in chunks)
        assert "We thank" not in joined and "@engines" not in joined and "©2020" not in joined
        if not profile.overlap_tokens:  # overlapping chunks repeat words
            assert joined.split() == document.readable().split()
    assert sum(len(text.split()) for text in marked) + len(document.readable().split()) == len(TEXT.split())
