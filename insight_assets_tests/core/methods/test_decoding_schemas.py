"""The methods' decoding schemas as llama.cpp grammars for the bundled model: a local model can
only write what the tasks' checks accept (SciPIP: one rating per idea, existing ideas, entities of 2 to
5 words, no raw control character in a pattern's string; InsightGen: the passages' chunk ids, no more
insights or queries than asked for, a judge's score for every label once;
XSum: an abstention or an answer citing only the passages shown), asked of the grammar itself."""

from __future__ import annotations

import pytest

from insight_assets.core.llm import gguf
from insight_assets.core.llm.providers.local_gguf import LocalProvider
from insight_assets.core.methods.insightgen.judge.tasks import JUDGE_INSIGHT_SET, JUDGE_SINGLE_INSIGHTS
from insight_assets.core.methods.insightgen.rag_baselines import RAG_REFINE
from insight_assets.core.methods.insightgen.tasks import GENERATE_INSIGHTS
from insight_assets.core.methods.scipip.tasks import (
    SCIPIP_DIGEST,
    SCIPIP_ENTITIES,
    SCIPIP_INTEGRATE,
    SCIPIP_JUDGE_IDEAS,
)
from insight_assets.core.methods.xsum.tasks import XSUM_ANSWER
from insight_assets_tests.core.llm.grammar_checks import allows_after

pytestmark = pytest.mark.local_model

THREE_IDEAS = {"ideas": [{"number": n, "text": f"idea {n}"} for n in (1, 2, 3)]}


@pytest.fixture(scope="module")
def model():
    return LocalProvider(gguf.bundled_model(), context_cap=None, threads=None).model


def test_the_judge_rates_each_idea_once_in_order(model):
    grammar = model.grammar(SCIPIP_JUDGE_IDEAS.decoding_schema(THREE_IDEAS))
    assert not allows_after(model, grammar, '{"ratings": [', "]")  # no empty list
    assert allows_after(model, grammar, '{"ratings": [{"idea": ', "1")
    assert not allows_after(model, grammar, '{"ratings": [{"idea": ', "2")
    one = '{"idea": 1, "novelty": 3, "clarity": 4, "feasibility": 2, "relevance": 5, "helpful": true}'
    assert not allows_after(model, grammar, '{"ratings": [' + one, "]")  # two ideas are left
    assert not allows_after(model, grammar, '{"ratings": [' + one + ', {"idea": ', "1")
    assert allows_after(model, grammar, '{"ratings": [' + one + ', {"idea": ', "2")


def test_the_selection_names_only_ideas_that_exist(model):
    grammar = model.grammar(SCIPIP_INTEGRATE.decoding_schema(THREE_IDEAS))
    assert allows_after(model, grammar, '{"selected": [', "3")
    assert not allows_after(model, grammar, '{"selected": [', "4")
    assert not allows_after(model, grammar, '{"selected": [1, 2, 3', ",")  # no more than there are


def test_an_entity_has_two_to_five_words_and_no_control_character(model):
    grammar = model.grammar(SCIPIP_ENTITIES.decoding_schema({}))
    assert not allows_after(model, grammar, '{"entities": ["citation', '"')
    assert allows_after(model, grammar, '{"entities": ["citation graph', '"')
    assert allows_after(model, grammar, '{"entities": ["citation graph', " of")
    assert not allows_after(model, grammar, '{"entities": ["graphs of citations of all', " of")
    assert not allows_after(model, grammar, '{"entities": ["citation', "\n")


def test_the_digest_summary_is_one_sentence_without_a_control_character(model):
    grammar = model.grammar(SCIPIP_DIGEST.decoding_schema({}))
    opening = '{"summary": "The problem of citation'
    assert allows_after(model, grammar, opening, " graphs")
    assert not allows_after(model, grammar, opening, "\n")
    assert allows_after(model, grammar, '{"summary": "', "The")
    assert not allows_after(model, grammar, '{"summary": "', "A")
    with pytest.raises(ValueError, match="refuses the prefix"):
        allows_after(model, grammar, '{"summary": "A', " problem")


def test_an_insight_cites_only_the_passages_given(model):
    inputs = {"max_insights": 1, "passages": [{"chunk_id": "S1"}, {"chunk_id": "S2"}]}
    grammar = model.grammar(GENERATE_INSIGHTS.decoding_schema(inputs))
    insight = (
        '{"type": "new idea", "hook": "h", "body": "b", "realization": "r", "justification": "j", '
        '"chunk_ids": ["S'
    )
    assert allows_after(model, grammar, '{"insights": [' + insight, "2")
    assert not allows_after(model, grammar, '{"insights": [' + insight, "3")
    scores = '2"], "relevance": 5, "novelty": 4, "usefulness": 3, "intent_alignment": 2}'
    assert not allows_after(model, grammar, '{"insights": [' + insight + scores, ",")  # one asked for


def test_no_more_queries_than_asked_for(model):
    grammar = model.grammar(RAG_REFINE.decoding_schema({"max_queries": 2}))
    assert allows_after(model, grammar, '{"queries": ["a b", "c d"', "]")
    assert not allows_after(model, grammar, '{"queries": ["a b", "c d"', ",")


def test_the_insight_judges_score_every_label_once_in_order(model):
    labels = [{"label": "Method A"}, {"label": "Method B"}]
    sets = model.grammar(JUDGE_INSIGHT_SET.decoding_schema({"sets": labels}))
    assert not allows_after(model, sets, '{"scores": [', "]")
    assert allows_after(model, sets, '{"scores": [{"label": "Method', " A")
    assert not allows_after(model, sets, '{"scores": [{"label": "Method', " B")
    assert allows_after(model, sets, '{"scores": [{"label": "Method A", "novelty": 3, "', "diversity")
    assert not allows_after(model, sets, '{"scores": [{"label": "Method A", "novelty": 3, "', "depth")
    single = model.grammar(JUDGE_SINGLE_INSIGHTS.decoding_schema({"insights": labels}))
    assert not allows_after(model, single, '{"scores": [', "]")
    assert not allows_after(model, single, '{"scores": [{"label": "Method', " B")


def test_an_xsum_answer_abstains_or_cites_only_the_passages_shown(model):
    grammar = model.grammar(XSUM_ANSWER.decoding_schema({"passages": [{"id": "S1"}, {"id": "S2"}]}))
    answering = '{"abstain": false, "answer": "Graphs link papers '
    assert allows_after(model, grammar, answering + "[S", "2")
    assert not allows_after(model, grammar, answering + "[S", "3")
    assert not allows_after(model, grammar, answering, '"')  # nothing cited yet
    assert allows_after(model, grammar, answering + "[S1]", '"')
    assert not allows_after(model, grammar, answering + "[S1]", "\n")
    assert allows_after(model, grammar, '{"abstain": true', "}")
