"""Answers: grounded citations, the repair of a wrong title, user questions, 0.9 de-duplication."""

from __future__ import annotations

import json
import math

import numpy as np

from insight_assets.core.curation import (
    ANSWER_QUESTION,
    AnswersSettings,
    GroundedAnswer,
    Question,
    citations_valid,
    generate_answers,
    question_id,
)
from insight_assets.core.llm import OFFLINE_LABEL, Budget, LLMClient, LLMSettings
from insight_assets_tests.core.curation.conftest import fake_client, hashing_embed
from insight_assets_tests.fake_model_server import Reply

SETTINGS = AnswersSettings()


def generated(text: str, document_ids: tuple[str, ...], index: int = 0) -> Question:
    return Question(question_id(text, document_ids), text, document_ids, index, "generated")


def user(text: str, answer: str | None = None, document_ids: tuple[str, ...] = ()) -> Question:
    return Question(question_id(text, document_ids), text, document_ids, None, "user", answer)


QUESTION = (
    "How do weight quantization and pruning trade accuracy against the memory of large language models?"
)


def test_offline_answers_cite_the_papers_they_quote(compressed):
    ids = ("gptq", "awq", "sparsegpt")
    outcome = generate_answers(
        LLMClient(LLMSettings()), [generated(QUESTION, ids)], compressed, SETTINGS, hashing_embed
    )

    [answer] = outcome.answers
    assert (answer.status, answer.answer_source, answer.document_ids) == ("kept", OFFLINE_LABEL, ids)
    assert answer.cited_document_ids and citations_valid(answer)
    titles = {doc.document_id: doc.title for doc in compressed}
    assert all(f"[{titles[i]}]" in answer.answer for i in answer.cited_document_ids)
    statements = [line[2:] for doc in compressed if doc.document_id in ids for line in doc.text.splitlines()]
    assert any(statement in answer.answer for statement in statements)
    assert not any(f"[{titles[i]}]" in answer.answer for i in titles if i not in ids)


def test_an_offline_answer_draws_on_every_paper_the_question_names_and_no_other(compressed):
    ids = ("gptq", "awq", "smoothquant", "sparsegpt")
    question = (
        '"GPTQ" leaves open: ‘Future work should study activation quantization.’ What do "AWQ" and '
        '"SmoothQuant" offer toward it?'
    )
    outcome = generate_answers(
        LLMClient(LLMSettings()), [generated(question, ids)], compressed, SETTINGS, hashing_embed
    )
    [answer] = outcome.answers
    assert set(answer.cited_document_ids) == {"gptq", "awq", "smoothquant"}
    assert (
        "Future work should study activation quantization and the interaction with sparsity." in answer.answer
    )


def test_the_check_rejects_a_title_that_is_not_given_exactly():
    inputs = {
        "question": QUESTION,
        "papers": [{"title": "GPTQ: Accurate Post-Training Quantization", "text": ""}],
    }
    wrong = GroundedAnswer(answer='As "GPTQ" shows, ...', cited_titles=["GPTQ"])
    right = GroundedAnswer(
        answer='As "GPTQ: Accurate Post-Training Quantization" shows.',
        cited_titles=[inputs["papers"][0]["title"]],
    )
    unmentioned = GroundedAnswer(answer="Quantization helps.", cited_titles=[inputs["papers"][0]["title"]])
    assert "not the exact title" in ANSWER_QUESTION.check_output(wrong, inputs)[0]
    assert ANSWER_QUESTION.check_output(right, inputs) == []
    assert "never mentions" in ANSWER_QUESTION.check_output(unmentioned, inputs)[0]
    assert (
        ANSWER_QUESTION.check_output(GroundedAnswer(answer="They do not say.", cited_titles=[]), inputs) == []
    )


def test_a_wrong_title_gets_one_repair_call_and_the_repaired_answer_is_used(server, compressed):
    ids = ("gptq", "awq", "qlora")
    titles = {doc.document_id: doc.title for doc in compressed}
    repaired = f'Second-order updates in "{titles["gptq"]}" keep 4-bit weights accurate.'
    server.queue(
        Reply(json.dumps({"answer": 'As "The GPTQ paper" shows, ...', "cited_titles": ["The GPTQ paper"]})),
        Reply(json.dumps({"answer": repaired, "cited_titles": [titles["gptq"]]})),
    )
    outcome = generate_answers(
        fake_client(server), [generated(QUESTION, ids)], compressed, SETTINGS, hashing_embed
    )

    first, repair = server.requests
    prompt = first.last_user_text()
    assert all(titles[i] in prompt for i in ids) and titles["smoothquant"] not in prompt
    assert QUESTION in prompt and first.body["temperature"] == 0.7
    assert '"The GPTQ paper"' in repair.last_user_text()
    [answer] = outcome.answers
    assert (answer.answer, answer.cited_document_ids, answer.status) == (repaired, ("gptq",), "kept")
    assert answer.answer_source == "openai/gpt-4o-mini"


def unit(*values: float) -> list[float]:
    return list(values)


def test_duplicates_at_0_9_and_user_questions_are_exempt(server, compressed):
    ids = ("gptq", "awq", "qlora")
    just_above, just_below = 0.9001, 0.8999
    vectors = {
        "answer one": unit(1, 0, 0),
        "answer two": unit(just_above, math.sqrt(1 - just_above**2), 0),  # cosine 0.9001 with one
        "answer three": unit(just_below, -math.sqrt(1 - just_below**2), 0),  # 0.8999 with one
        "answer four": unit(0, 0, 1),
        "the user's answer": unit(0, 0.3, 0.954),  # cosine 0.954 with four
    }

    def embed(texts: list[str]) -> np.ndarray:
        return np.array([vectors[text] for text in texts])

    questions = [generated(f"Question {n}?", ids, n) for n in ("one", "two", "three", "four")]
    questions.append(user("The user's question?", "the user's answer"))
    server.queue(
        *(
            Reply(json.dumps({"answer": f"answer {n}", "cited_titles": []}))
            for n in ("one", "two", "three", "four")
        )
    )

    outcome = generate_answers(fake_client(server), questions, compressed, SETTINGS, embed)

    assert len(server.requests) == 4  # the user's answer is not sent to the model
    statuses = [(a.status, a.duplicate_of) for a in outcome.answers]
    assert statuses == [
        ("kept", None),
        ("duplicate", questions[0].question_id),
        ("kept", None),
        ("duplicate", questions[4].question_id),  # the later user answer wins: users go first
        ("kept", None),
    ]
    user_answer = outcome.answers[4]
    assert (user_answer.answer_source, user_answer.source, user_answer.cited_document_ids) == (
        "user",
        "user",
        (),
    )


def test_user_questions_without_documents_are_answered_from_the_closest_ones(compressed):
    question = user("How does distillation of a student from a teacher compare with quantization?")
    settings = AnswersSettings(max_documents_for_user_questions=2)
    outcome = generate_answers(LLMClient(LLMSettings()), [question], compressed, settings, hashing_embed)
    [answer] = outcome.answers
    assert len(answer.document_ids) == 2 and "distil" in answer.document_ids
    assert answer.source == "user" and answer.answer_source == OFFLINE_LABEL and citations_valid(answer)


def test_user_answers_with_documents_cite_them_and_unknown_documents_fail(compressed):
    questions = [user("Given?", "Mine.", ("gptq",)), user("Orphan?", None, ("missing",))]
    outcome = generate_answers(LLMClient(LLMSettings()), questions, compressed, SETTINGS, hashing_embed)
    given, orphan = outcome.answers
    assert (given.answer, given.cited_document_ids, given.status) == ("Mine.", ("gptq",), "kept")
    assert orphan.status == "failed" and [f.item for f in outcome.failures] == [orphan.question_id]


def test_when_the_budget_runs_out_answers_are_skipped(server, compressed):
    questions = [generated(QUESTION, ("gptq", "awq")), user("Given?", "Mine.")]
    client = fake_client(server, budget=Budget(max_tokens=0))
    outcome = generate_answers(client, questions, compressed, SETTINGS, hashing_embed)
    assert [a.status for a in outcome.answers] == ["skipped", "kept"]
    assert outcome.budget_error and not outcome.failures and not server.requests


def test_an_answer_that_cites_nothing_or_a_paper_it_was_not_given_is_not_validly_cited():
    from insight_assets.core.curation.answers import Answer

    def answer(cited: tuple[str, ...], writer: str = OFFLINE_LABEL) -> Answer:
        return Answer("q", "Why?", "Because.", ("a", "b"), cited, "generated", writer, "kept")

    assert citations_valid(answer(("a",))) and citations_valid(answer(("a", "b")))
    assert not citations_valid(answer(()))
    assert not citations_valid(answer(("a", "z")))
    assert citations_valid(answer((), writer="user"))  # the user's own answer, written from no paper
    assert not citations_valid(answer(("z",), writer="user"))


def test_a_dry_run_does_not_judge_guessed_answers_as_duplicates(compressed):
    ids = tuple(doc.document_id for doc in compressed[:3])
    questions = [generated(f"What does question {n} ask of these papers?", ids, n) for n in range(4)]

    def constant(texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), 3))

    built = generate_answers(LLMClient(LLMSettings()), questions, compressed, SETTINGS, constant)
    planned = generate_answers(
        LLMClient(LLMSettings(provider="openai", model="gpt-4o-mini"), estimate_only=True),
        questions,
        compressed,
        SETTINGS,
        constant,
    )

    assert [a.status for a in built.answers].count("kept") == 1
    assert [a.status for a in planned.answers] == ["kept"] * 4
