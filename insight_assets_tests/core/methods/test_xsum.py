"""XSum's parts that need no collection: sections, in-text citations, targets, citations in the
texts, the offline tasks and the scores."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from insight_assets.core.citations.intext import CitedReference, cited_documents, numeric_labels
from insight_assets.core.citations.paragraphs import CitingPaper
from insight_assets.core.ingestion.sections import find_section, section_spans
from insight_assets.core.llm import LLMClient, LLMSettings
from insight_assets.core.methods import xsum
from insight_assets.core.methods.xsum import offline, scores, targets
from insight_assets.core.methods.xsum.tasks import XSUM_ANSWER, XSUM_EDITOR

PAPER = """Title of the paper

Abstract
We study things.

1 Introduction
Prior work (Smith et al., 2019) matters.

2 Related Work
Word vectors (Mikolov et al., 2013a) and sentence vectors (Le and Mikolov, 2014) are
known; so is Kiros et al. (2015). Others [3] differ.

2.1 Older work
Bengio et al., 2003 started it.

3 Method
We cite Smith et al. (2019) here, outside the section.
"""
SECTIONS = ["Abstract", "1 Introduction", "2 Related Work", "2.1 Older work", "3 Method"]
REFERENCES = [
    CitedReference("", "mikolov", 2013, "w2v"),
    CitedReference("", "le", 2014, "pv"),
    CitedReference("", "kiros", 2015, "skip"),
    CitedReference("", "bengio", 2003, "nplm"),
    CitedReference("", "smith", 2019, "smith"),
    CitedReference("", "jones", 2010, None),
]


def test_a_section_runs_to_the_next_heading_of_its_level():
    spans = section_spans(PAPER, SECTIONS)
    related = find_section(spans, ["related work"])
    assert related.level == 1 and related.name == "related work"
    text = related.text(PAPER)
    assert text.startswith("Word vectors") and "Bengio" in text and "outside the section" not in text
    assert find_section(spans, ["older work"]).level == 2


def test_in_text_citations_are_read_in_both_styles():
    section = find_section(section_spans(PAPER, SECTIONS), ["related work"]).text(PAPER)
    assert cited_documents(section, REFERENCES) == ["w2v", "pv", "skip", "nplm"]
    assert numeric_labels("as shown [2, 5-7] and [12]") == {"2", "5", "6", "7", "12"}
    numbered = [CitedReference("6", "", 0, "six"), CitedReference("8", "", 0, "eight")]
    assert cited_documents("as shown [2, 5-7]", numbered) == ["six"]


def test_an_evaluation_target_needs_enough_cited_collection_papers():
    paper = CitingPaper("me", "Title of the paper", PAPER, SECTIONS, len(PAPER), REFERENCES)

    (target,) = targets.evaluation_targets([paper], min_cited=3)

    assert target.kind == "evaluation" and target.doc_ids == ("nplm", "pv", "skip", "w2v")
    assert target.reference.startswith("Word vectors") and target.reference_section == "2 Related Work"
    assert targets.evaluation_targets([paper], min_cited=5) == []


def test_cluster_targets_keep_the_papers_holding_most_of_the_cluster():
    counts = {0: Counter({"a": 5, "b": 1, "c": 3}), 1: Counter()}
    (target,) = targets.cluster_targets({0: "word vectors", 1: "empty"}, counts, max_papers=2)
    assert target.topic == "word vectors" and target.doc_ids == ("a", "c")
    assert targets.collection_target("demo", ["a", "b", "c"], ["x"], max_papers=2) == []


def test_bad_user_target_lines_are_reported_with_their_numbers(tmp_path):
    titles = {"d1": "Skip-Thought Vectors", "d2": "Universal Sentence Encoder", "d3": "No chunks"}
    lines = [
        json.dumps(
            {"topic": "sentence encoders", "titles": ["skip-thought vectors", "Universal Sentence Encoder"]}
        ),
        "{not json",
        json.dumps({"topic": "x", "document_ids": ["d1"], "titles": ["Skip-Thought Vectors"]}),
        json.dumps({"topic": "y", "document_ids": ["nope"]}),
        "# a comment",
        json.dumps({"topic": "sentence encoders", "document_ids": ["d2", "d1"]}),
        json.dumps({"topic": "z", "document_ids": ["d3"]}),
        json.dumps({"topic": "", "document_ids": ["d1"]}),
    ]
    path = tmp_path / "summaries.jsonl"
    path.write_text("\n".join(lines) + "\n")

    found, problems = targets.user_targets(path, titles, searchable={"d1", "d2"})

    assert [t.doc_ids for t in found] == [("d1", "d2")]
    messages = {p.line: p.message for p in problems}
    assert messages.pop(2).startswith("invalid JSON")
    assert messages == {
        3: 'give exactly one of "document_ids" and "titles"',
        4: "unknown document ids: nope",
        6: "duplicate of line 1",
        7: "papers with no chunks to retrieve from: d3",
        8: '"topic" must be a non-empty string',
    }


def test_citations_map_from_aliases_to_chunk_ids_and_render_for_people():
    ids = {"S1": "a" * 32, "S2": "b" * 32}
    sources = {
        "a" * 32: xsum.Source("a" * 32, "d1", "Skip-Thought Vectors", 3, 3),
        "b" * 32: xsum.Source("b" * 32, "d2", "Paragraph Vector", 4, 5),
    }

    stored = xsum.chunk_citations("Encoders [S2, S1]. Kept [S9].", ids)

    assert stored == f"Encoders [{'b' * 32}; {'a' * 32}]. Kept [S9]."
    assert xsum.cited_chunks(stored) == ["b" * 32, "a" * 32]
    assert xsum.render_citations(stored, sources) == (
        "Encoders (Paragraph Vector, pp. 4\u20135; Skip-Thought Vectors, p. 3). Kept [S9]."
    )


PASSAGES = [
    {
        "id": "S1",
        "source": "A, p. 1",
        "text": "Skip-thought vectors encode a sentence to predict its neighbours.",
    },
    {"id": "S2", "source": "B, p. 2", "text": "The weather in the experiments was sunny and warm all week."},
]


def test_offline_answers_cite_or_abstain_explicitly():
    client = LLMClient(LLMSettings())
    answered = client.run(
        XSUM_ANSWER, question="How do skip-thought vectors encode a sentence?", passages=PASSAGES
    )
    abstained = client.run(XSUM_ANSWER, question="Which optimiser schedules warmup?", passages=PASSAGES)
    assert not answered.abstain and answered.answer.endswith("[S1]")
    assert abstained.abstain and abstained.answer == ""


def test_the_offline_editor_keeps_citations_and_only_known_ones():
    client = LLMClient(LLMSettings())
    summary = client.run(
        XSUM_EDITOR,
        topic="sentence encoders",
        questions_and_answers=[
            {
                "question": "q1",
                "answer": "Skip-thought vectors predict the neighbouring sentences of a text [S1].",
            },
            {
                "question": "q2",
                "answer": "Paragraph vectors learn one vector for every document they read [S2].",
            },
        ],
        sources=[{"id": "S1", "source": "A"}, {"id": "S2", "source": "B"}],
    )
    assert xsum.tasks.cited_aliases(summary.text) == ["S1", "S2"]


def test_offline_questions_are_templates_around_the_abstracts_phrases():
    value = offline.questions_offline(
        "Skip-Thought Vectors", "We describe an encoder-decoder model for sentences.", 5
    )
    assert len(value.questions) == 5 and all("Skip-Thought Vectors" in q for q in value.questions)


def test_scores():
    assert scores.reference_f1(["a", "b", "x"], ["a", "b", "c", "d"]) == {
        "ref_precision": 0.6667,
        "ref_recall": 0.5,
        "ref_f1": 0.5714,
    }
    # Two citations that name no paper (an invented alias, a chunk that does not exist) are wrong.
    assert scores.reference_f1(["a", "b"], ["a", "b", "c", "d"], unresolved=2)["ref_precision"] == 0.5
    assert scores.reference_f1([], ["a"], unresolved=1) == {
        "ref_precision": 0.0,
        "ref_recall": 0.0,
        "ref_f1": 0.0,
    }
    assert (
        scores.plain_text(f"Vectors [{'a' * 32}] work (Kiros et al., 2015) well [3, 4].")
        == "Vectors work well ."
    )
    same = scores.rouge_recall("the cats sat on mats", "the cat sat on the mat")
    assert same["rouge1"] == 1.0 and same["rouge2"] == 0.75

    def embed(texts):
        return np.array([[1.0, 0.0] if "cat" in t else [0.0, 1.0] for t in texts])

    recall = scores.semantic_recall("A cat sat. A dog ran.", "The cat slept here.", embed)
    assert recall == 0.5


def test_settings_refuse_what_the_paper_cannot_mean():
    with pytest.raises(ValueError, match="retrieval_scope"):
        xsum.AnswersSettings(retrieval_scope="everything")
    with pytest.raises(ValueError, match="top_n"):
        xsum.AnswersSettings(candidates=10, top_n=20)


def test_the_offline_checklist_refinement_merges_questions_about_the_same_point():
    from insight_assets.core.methods.xsum.offline import refine_checklist_offline

    refined = refine_checklist_offline(
        "reference",
        [
            "Does the summary convey that citation graphs link papers?",
            "Does the summary convey that citation graphs link the papers?",
            "Does the summary convey that SPECTER embeds documents?",
        ],
        max_questions=5,
    )
    assert refined.questions == [
        "Does the summary convey that citation graphs link papers?",
        "Does the summary convey that SPECTER embeds documents?",
    ]
