"""What a paper states it leaves open, found from its wording; sentences from the corpus's papers."""

from __future__ import annotations

import pytest

from insight_assets.core.curation.compression import compress_offline
from insight_assets.core.curation.open_problems import is_open_problem, quotable


@pytest.mark.parametrize(
    "sentence",
    [
        "We leave exploration of contrastive pre-training (Chen et al., 2020b; He et al., 2020) to future work.",
        "It is unclear if such systems can be used for tasks without large amounts of training data.",
        "The qualitative difference between doc2vec and word2vec document embeddings, however, remains unclear.",
        "Automatically extracting the answer from those texts remains an open challenge.",
        "Our paper is limited to faithfulness evaluation, but summaries are evaluated for salience as well.",
        "In this work, we did not consider memory networks for the SQuAD dataset.",
        "We would like to investigate the other sharing mechanisms of the different tasks.",
    ],
)
def test_a_stated_limitation_open_question_or_future_work_is_an_open_problem(sentence):
    assert is_open_problem(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "Due to space limitations, here we just note that inverse PageRank turned out to be slightly better.",
        "We release our code to facilitate future work in this field.",
        "Open question answering with neural models was considered by Chen et al. (2017).",
        "The rest of our paper is structured as follows: Section 2 discusses related work.",
        "There are several promising directions for future work on the architecture: • Increasing expressivity.",
        "Ideally, we would like to release f(x) with noise magnitude proportional to its sensitivity.",
        "We present SPECTER, a model for learning representations of scientific papers.",
    ],
)
def test_a_cue_word_alone_does_not_make_an_open_problem(sentence):
    assert not is_open_problem(sentence)


def test_a_quoted_open_problem_keeps_its_own_clause_without_opener_or_citations():
    assert (
        quotable("However, it remains unclear how to combine them [12, 14]; see Section 5 for details")
        == "It remains unclear how to combine them."
    )
    assert (
        quotable("As future work, we plan to study salience (Fabbri et al., 2021).")
        == "We plan to study salience."
    )
    assert quotable("In future work, we are also evaluating the encoders on other tasks.") == (
        "We are also evaluating the encoders on other tasks."
    )
    # A main clause after a subordinate one is quoted alone, unless it points back into it.
    assert quotable("While results vary by domain, it is unclear which features transfer.") == (
        "It is unclear which features transfer."
    )
    assert quotable("While the scores differ, it is unclear in which way they are incorrect.") == (
        "While the scores differ, it is unclear in which way they are incorrect."
    )


def test_offline_compression_keeps_the_papers_open_problems_among_its_conclusions():
    central = " ".join(f"We propose method {n} for parsing scientific tables with graphs." for n in range(8))
    text = (
        central + " Results show that the parser improves accuracy by 4 points. "
        "Handling tables that span several pages remains an open problem. "
        "We thank the reviewers for their comments."
    )
    digest = compress_offline("Parsing Scientific Tables", text, max_items=2)
    assert digest.conclusions[0] == "Handling tables that span several pages remains an open problem."
