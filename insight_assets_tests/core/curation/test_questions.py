"""Question generation: offline end to end, and the prompts a model provider receives."""

from __future__ import annotations

import json
import re

from insight_assets.core.curation import (
    GENERATE_QUESTIONS,
    QuestionsSettings,
    generate_questions,
    question_id,
)
from insight_assets.core.curation.question_tasks import generate_offline
from insight_assets.core.curation.records import rendered_statements
from insight_assets.core.llm import LLMClient, LLMSettings
from insight_assets_tests.core.curation.conftest import fake_client, hashing_embed
from insight_assets_tests.fake_model_server import Reply

SETTINGS = QuestionsSettings(combination_size=3, num_combinations=6, target_count=20)


def short_name(title: str) -> str:
    """What every (possibly shortened) form of a title starts with: "GPTQ" of "GPTQ: ..."."""
    return title.split(":")[0].split()[0]


def test_offline_generation_counts_limits_and_combinations(compressed):
    outcome = generate_questions(LLMClient(LLMSettings()), compressed, SETTINGS, hashing_embed)

    assert outcome.target == 20 and not outcome.failures and outcome.budget_error is None
    assert len(outcome.combinations) == 6
    assert len(outcome.candidates) == 6 * SETTINGS.candidates_per_combination
    assert 0 < len(outcome.questions) <= outcome.target
    combinations = {c.index: c.document_ids for c in outcome.combinations}
    titles = {doc.document_id: doc.title for doc in compressed}
    for question in outcome.questions:
        assert 15 <= len(question.question.split()) <= 35 and question.question.endswith("?")
        assert question.document_ids == combinations[question.combination_index]
        assert question.source == "generated" and question.user_answer is None
        assert question.question_id == question_id(question.question, question.document_ids)
        # Every question names two of the combination's papers by (possibly shortened) title.
        named = [i for i in question.document_ids if '"' + short_name(titles[i]) in question.question]
        assert len(named) >= 2
    kept = [c for c in outcome.candidates if c.kept]
    assert len(kept) == len(outcome.questions) and all(c.reason == "kept" for c in kept)
    per_combination = [sum(1 for c in kept if c.combination_index == i) for i in combinations]
    assert max(per_combination) <= 4  # quota: ceil(20 / 6)


def test_offline_questions_quote_an_open_problem_a_paper_states_and_ask_the_others_about_it(compressed):
    papers = [vars(doc) for doc in compressed if doc.document_id in ("gptq", "awq", "smoothquant")]
    questions = generate_offline(papers, count=10, min_words=15, max_words=35).questions

    quoting = [question for question in questions if "‘" in question]
    assert quoting and questions[: len(quoting)] == quoting  # the stated problems are asked first
    statements = {paper["title"]: rendered_statements(paper["text"]) for paper in papers}
    for question in quoting:
        quoted = question.split("‘")[1].split("’")[0].rstrip(".")
        asker = next(title for title in statements if question.startswith(f'"{short_name(title)}'))
        assert any(quoted in statement for statement in statements[asker]), question
        assert sum(f'"{short_name(title)}' in question for title in statements) >= 2
    # The paper that states no open problem (AWQ) is still asked about, by what another found.
    assert any("AWQ" in question and "‘" not in question for question in questions)
    assert not any(re.search(r"assumptions about \w+\?$", question) for question in questions)


def test_offline_questions_of_one_paper_stay_with_it():
    paper = {
        "title": "Parsing Scientific Tables",
        "text": "Title: Parsing Scientific Tables\nConclusions:\n- Tables spanning pages remain an open problem.",
    }
    questions = generate_offline([paper], count=3, min_words=8, max_words=35).questions
    assert questions[0] == (
        '"Parsing Scientific Tables" leaves open: ‘Tables spanning pages remain an open problem.’ '
        "What would it take to address it?"
    )
    assert len(questions) == 2 and "‘" not in questions[1]


def test_offline_generation_is_deterministic_per_seed(compressed):
    client = LLMClient(LLMSettings())
    first = generate_questions(client, compressed, SETTINGS, hashing_embed)
    again = generate_questions(client, compressed, SETTINGS, hashing_embed)
    other = generate_questions(
        client, compressed, QuestionsSettings(**{**vars(SETTINGS), "seed": 1}), hashing_embed
    )
    assert again.questions == first.questions
    assert other.combinations != first.combinations


def test_small_collections_get_a_smaller_target(compressed):
    outcome = generate_questions(LLMClient(LLMSettings()), compressed[:4], QuestionsSettings(), hashing_embed)
    # The one combination holds the four papers, in id order (the order the warehouse gives them).
    assert [c.document_ids for c in outcome.combinations] == [
        tuple(sorted(doc.document_id for doc in compressed[:4]))
    ]
    assert outcome.target == 4 and len(outcome.questions) <= 4


def test_near_duplicate_questions_are_dropped_in_combination_order(compressed):
    # An embedding that sees every question as the same text: only the first survives.
    def constant(texts: list[str]):
        return hashing_embed(["same" for _ in texts])

    outcome = generate_questions(LLMClient(LLMSettings()), compressed, SETTINGS, constant)
    assert len(outcome.questions) == 1
    first = outcome.questions[0].question_id
    assert {c.reason for c in outcome.candidates if c.refined_question and not c.kept} == {
        f"near-duplicate of {first}"
    }


def test_a_dry_run_keeps_guessed_questions_the_filter_cannot_judge(compressed):
    # The dry run's questions are the offline stand-in's guesses: whether the model's would be
    # near-duplicates is unknown, so the plan counts as many as the refiner was asked for.
    def constant(texts: list[str]):
        return hashing_embed(["same" for _ in texts])

    planned = generate_questions(
        LLMClient(LLMSettings(provider="openai", model="gpt-4o-mini"), estimate_only=True),
        compressed,
        SETTINGS,
        constant,
    )
    built = generate_questions(LLMClient(LLMSettings()), compressed, SETTINGS, constant)

    assert len(built.questions) == 1
    assert len(planned.questions) == planned.target == SETTINGS.target_count
    assert not any(c.reason.startswith("near-duplicate") for c in planned.candidates)


def words(count: int, stem: str) -> str:
    return " ".join([stem] + ["aspect"] * (count - 2)) + " trade-offs?"


def test_the_model_sees_the_papers_and_limits_and_its_selection_is_used(server, compressed):
    settings = QuestionsSettings(
        combination_size=3, num_combinations=1, candidates_per_combination=4, target_count=2
    )
    long_enough, too_short, rewritten = words(20, "How"), "Why quantize?", words(18, "Which")
    server.queue(
        Reply(json.dumps({"questions": [long_enough, too_short, words(40, "What"), words(16, "When")]})),
        Reply(json.dumps({"selected": [{"number": 2, "question": rewritten}]})),
    )

    outcome = generate_questions(fake_client(server), compressed, settings, hashing_embed)

    generation, refinement = server.requests
    prompt = generation.last_user_text()
    [combination] = outcome.combinations
    for doc in compressed:
        assert (doc.text in prompt) == (doc.document_id in combination.document_ids)
        assert (doc.title in prompt) == (doc.document_id in combination.document_ids)
    assert "15 and 35 words" in prompt and "How do different strategies for X" in prompt
    assert (generation.body["temperature"], GENERATE_QUESTIONS.max_tokens) == (0.7, 2000)
    refine_prompt = refinement.last_user_text()
    assert f"[1] {long_enough}" in refine_prompt and f"[2] {words(16, 'When')}" in refine_prompt
    assert too_short not in refine_prompt and "at most 2" in refine_prompt
    assert [q.question for q in outcome.questions] == [rewritten]
    reasons = [c.reason for c in outcome.candidates]
    assert reasons == ["not selected", "too short", "too long", "kept"]
    assert outcome.candidates[3].refined_question == rewritten


def test_a_refinement_that_breaks_its_contract_is_repaired(server, compressed):
    settings = QuestionsSettings(
        combination_size=3, num_combinations=1, candidates_per_combination=2, target_count=1
    )
    first, second = words(20, "How"), words(22, "Why")
    server.queue(
        Reply(json.dumps({"questions": [first, second]})),
        Reply(
            json.dumps({"selected": [{"number": 3, "question": first}, {"number": 1, "question": "Short?"}]})
        ),
        Reply(json.dumps({"selected": [{"number": 2, "question": second}]})),
    )
    outcome = generate_questions(fake_client(server), compressed, settings, hashing_embed)
    repair = server.requests[2].last_user_text()
    assert "no candidate number 3" in repair and "select at most 1" in repair and "has 1 words" in repair
    assert [q.question for q in outcome.questions] == [second]


def test_a_failed_combination_is_reported_and_the_others_go_on(server, compressed):
    settings = QuestionsSettings(
        combination_size=3, num_combinations=2, candidates_per_combination=1, target_count=2
    )
    server.queue(
        Reply("not json"),
        Reply("still not json"),
        Reply(json.dumps({"questions": [words(20, "How")]})),
        Reply(json.dumps({"selected": [{"number": 1, "question": words(20, "How")}]})),
    )
    outcome = generate_questions(fake_client(server), compressed, settings, hashing_embed)
    [failure] = outcome.failures
    assert failure.item == "combination 0" and failure.error.startswith("generate_questions:")
    assert [q.combination_index for q in outcome.questions] == [1]
