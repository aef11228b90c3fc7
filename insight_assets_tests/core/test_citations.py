"""References cut into entries and matched to a collection's papers."""

from __future__ import annotations

import pytest

from insight_assets.core.citations import (
    CitingDocument,
    MatchSettings,
    Paper,
    build_citation_graph,
    co_citations,
    fold,
    match_references,
    split_references,
    title_similarity,
)

NUMBERED = """[1] Richard Socher, Alex Perelygin, and Christopher Potts. Recursive deep models for semantic
compositionality over a sentiment treebank. In EMNLP, 2013.
[2] Sepp Hochreiter and Jürgen Schmidhuber. Long short-term memory. Neural computation, 9(8):1735–
1780, 1997.
8
[3] Quoc V Le and Tomas Mikolov. Distributed representations of sentences and documents. ICML, 2014.
"""

AUTHOR_YEAR = """Bengio, Y., Ducharme, R., and Vincent, P. (2001). A neural probabilistic language model. In
Advances in Neural Information Processing Systems 13, pages 933–938.
Collobert, Ronan and Weston, Jason. A unified architecture for natural language processing. In Proceed-
ings of ICML, 2008.
Yoon Kim. 2014. Convolutional neural networks for sentence classification. In EMNLP.
D. Baker and A. McCallum. Distributional clustering of words for text classification. In SIGIR, 1998.
"""

LABELLED = """[Chen and Manning2014] Danqi Chen and Christopher D. Manning. 2014. A fast and accurate
dependency parser using neural networks. In Proc. EMNLP.
[Kim2014] Yoon Kim. 2014. Convolutional neural networks for sentence classification.
[Le and Mikolov2014] Quoc Le and Tomas Mikolov. 2014. Distributed representations of sentences and
documents. In ICML.
"""


def test_numbered_references_are_cut_at_their_numbers_and_lose_page_numbers():
    references = split_references(NUMBERED)
    assert len(references) == 3
    assert references[1].text == (
        "Sepp Hochreiter and Jürgen Schmidhuber. Long short-term memory. Neural computation, 9(8):1735– 1780, 1997."
    )
    assert [(r.first_author, r.year) for r in references] == [
        ("socher", 2013),
        ("hochreiter", 1997),
        ("le", 2014),
    ]


def test_author_year_references_are_cut_where_an_author_list_starts():
    references = split_references(AUTHOR_YEAR)
    assert [(r.first_author, r.year) for r in references] == [
        ("bengio", 2001), ("collobert", 2008), ("kim", 2014), ("baker", 1998),
    ]  # fmt: skip
    # A word hyphenated across lines is joined back.
    assert "Proceedings of ICML" in references[1].text


def test_bracketed_numbers_in_a_table_after_the_references_do_not_make_a_numbered_list():
    block = AUTHOR_YEAR + "Table 11 | Hyperparameters\n[6, 9, 12]\n[1]\n[9, 12, 24]\n[1]\n12. Learning rate\n"
    assert [r.first_author for r in split_references(block)][:4] == ["bengio", "collobert", "kim", "baker"]


def test_labelled_references_drop_their_labels():
    references = split_references(LABELLED)
    assert [r.first_author for r in references] == ["chen", "kim", "le"]
    assert references[2].text.startswith("Quoc Le and Tomas Mikolov. 2014. Distributed representations")


def test_folding_ignores_case_accents_spacing_and_hyphens():
    assert fold("Sen´ecal") == fold("Senécal") == "senecal"
    assert fold("A Simple but Tough-to-\nBeat Baseline") == fold("a simple but tough-to-beatbaseline")


def test_title_similarity_is_one_for_a_verbatim_title_and_low_for_scattered_letters():
    reference = fold(
        "Quoc V Le and Tomas Mikolov. Distributed representations of sentences and documents. ICML"
    )
    assert title_similarity(fold("Distributed Representations of Sentences and Documents"), reference) == 1.0
    dropped = title_similarity(
        fold("Distributed Representations of Words and Sentences and Documents"), reference
    )
    assert 0.85 < dropped < 1.0
    assert title_similarity(fold("Deep Residual Learning for Image Recognition"), reference) < 0.5


PARAGRAPH_VECTORS = Paper(
    "pv",
    "Distributed Representations of Sentences and Documents",
    "Distributed Representations of Sentences and Documents\nQuoc Le\nTomas Mikolov\nGoogle Inc\n"
    "Proceedings of the 31st International Conference on Machine Learning, Beijing, China, 2014.\nAbstract\n"
    "Many machine learning algorithms require the input to be represented as a fixed-length feature vector "
    "(Harris, 1954; Bengio et al., 2006).",
)
LSTM = Paper(
    "lstm", "Long Short-Term Memory", "Long Short-Term Memory\nSepp Hochreiter\nJürgen Schmidhuber\n"
)


def test_a_reference_matches_the_paper_whose_title_it_holds():
    references = split_references(NUMBERED)
    matches = match_references("citing", references, [PARAGRAPH_VECTORS, LSTM])
    assert [m.cited_doc_id for m in matches] == [None, "lstm", "pv"]
    assert matches[0].reason == "no collection paper's title"
    assert matches[2].title_similarity == 1.0 and matches[2].reason == ""


@pytest.mark.parametrize(
    ("reference", "reason"),
    [
        # Another author's paper sharing the title's words.
        (
            "[1] Andriy Mnih. Distributed representations of sentences and documents, revisited. 2014.",
            "first author 'mnih'",
        ),
        # Before a year the paper's first page names (its publication line's 2014).
        (
            "[1] Quoc Le. Distributed representations of sentences and documents. Tech report, 2001.",
            "year 2001 is before 2014",
        ),
        # After its publication line (2014), beyond the tolerance of one year.
        (
            "[1] Quoc Le. Distributed representations of sentences and documents. Journal, 2019.",
            "year 2019 is after",
        ),
    ],
)
def test_author_and_year_checks_reject_a_title_match(reference, reason):
    (match,) = match_references("citing", split_references(reference), [PARAGRAPH_VECTORS])
    assert match.cited_doc_id is None and match.candidate_doc_id == "pv" and reason in match.reason


def test_unknown_facts_do_not_reject_and_a_paper_never_cites_itself():
    (match,) = match_references(
        "x", split_references("[1] Long short-term memory, a tutorial reprint."), [LSTM]
    )
    assert match.cited_doc_id == "lstm"  # no author, no year: only the title decides
    (itself,) = match_references(
        "lstm", split_references("[1] S. Hochreiter. Long short-term memory. 1997."), [LSTM]
    )
    assert itself.cited_doc_id is None


def test_thresholds_are_settings():
    reference = split_references(
        "[1] Quoc Le. Distributed representations of phrases and documents. ICML, 2014."
    )
    loose = match_references(
        "citing", reference, [PARAGRAPH_VECTORS], MatchSettings(min_title_similarity=0.8)
    )
    strict = match_references(
        "citing", reference, [PARAGRAPH_VECTORS], MatchSettings(min_title_similarity=0.99)
    )
    assert loose[0].cited_doc_id == "pv" and strict[0].cited_doc_id is None
    with pytest.raises(ValueError, match="min_title_similarity"):
        MatchSettings(min_title_similarity=0)


def test_the_graph_has_one_edge_per_pair_and_counts_co_citations():
    cites_both = "".join(
        f"[{n}] Quoc Le. Distributed representations of sentences and documents. 2014.\n" for n in (1, 2)
    )
    cites_both += (
        "[3] Sepp Hochreiter. Long short-term memory. 1997.\n[4] Someone Else. Unrelated work. 2010."
    )
    documents = [
        CitingDocument("a", "Paper A about things", "Paper A\nAnne Author\n", cites_both),
        CitingDocument("b", "Paper B about other things", "Paper B\nBob Author\n", cites_both),
        CitingDocument("pv", PARAGRAPH_VECTORS.title, PARAGRAPH_VECTORS.first_page, ""),
        CitingDocument("lstm", LSTM.title, LSTM.first_page, ""),
    ]
    graph = build_citation_graph(documents)
    assert graph.reference_count == 8
    assert sorted((e["citing_doc_id"], e["cited_doc_id"]) for e in graph.edges) == [
        ("a", "lstm"), ("a", "pv"), ("b", "lstm"), ("b", "pv"),
    ]  # fmt: skip
    assert co_citations(graph.edges) == [("lstm", "pv", 2)]


def test_two_references_run_together_are_checked_by_the_authors_and_year_before_the_title():
    lstm = Paper("lstm", LSTM.title, LSTM.first_page + "Neural Computation 9(8): 1735-1780, 1997\n")
    merged = split_references(
        "Jeffrey Elman. 1990. Finding structure in time. Cognitive Science. Published as a conference paper "
        "at ICLR 2018 Sepp Hochreiter and Jürgen Schmidhuber. 1997. Long short-term memory."
    )
    (match,) = match_references("citing", merged, [lstm])
    assert match.cited_doc_id == "lstm"  # by Hochreiter in 1997, not Elman in 1990


def test_citation_problems_name_invented_aliases_chunks_not_given_and_rejected_writers():
    from insight_assets.core.retrieval.citing import citation_problems, unknown_citations

    given = ["a" * 16, "b" * 16]
    assert citation_problems(f"Fine [{'a' * 16}; {'b' * 16}].", given) == []
    assert citation_problems(f"Invented [S9]. Real [{'a' * 16}].", given) == [
        "cites S9, which names no passage it was given"
    ]
    assert citation_problems(f"Elsewhere [{'c' * 16}].", given) == [
        f"cites {'c' * 12}, which it was not given"
    ]
    rejected = "invalid output twice:\n- " + unknown_citations("x [S7]", {"S1"})[0]
    assert citation_problems("", given, rejected) == [
        "its writer cited sources it was not given (the output was rejected)"
    ]
    assert citation_problems("", given, "the provider timed out") == []


def test_a_reference_naming_a_papers_doi_cites_it_before_any_title_is_compared():
    papers = [
        Paper("a", "A Study of Something Else Entirely", "First page of a", doi="10.1234/xyz.5"),
        Paper("b", "Citing Paper", "First page of b"),
    ]
    (by_doi,) = match_references(
        "b", split_references("[1] Doe, J. 2020. An abbreviated title. doi:10.1234/XYZ.5."), papers
    )
    assert by_doi.cited_doc_id == "a" and by_doi.title_similarity == 1.0 and by_doi.reason == ""
    # A paper never cites itself, by DOI either; an unknown DOI falls back on the title.
    (own,) = match_references("a", split_references("[1] Doe, J. 2020. Title. doi:10.1234/xyz.5."), papers)
    assert own.cited_doc_id is None
    (other,) = match_references("b", split_references("[1] Doe, J. 2020. Title. doi:10.9999/other."), papers)
    assert other.cited_doc_id is None
