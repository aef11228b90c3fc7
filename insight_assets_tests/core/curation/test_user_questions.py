"""questions.jsonl: good lines become questions, bad ones are reported with their line numbers."""

from __future__ import annotations

import json

from insight_assets.core.curation import load_user_questions, question_id

LINES = [
    "# questions about the collection",  # 1: a comment
    json.dumps({"question": "How do  quantization methods differ?"}),  # 2
    "",  # 3: blank
    json.dumps({"question": "Why prune?", "answer": "To save memory.", "document_ids": ["gptq"]}),  # 4
    '{"question": "broken"',  # 5
    json.dumps({"answer": "no question"}),  # 6
    json.dumps({"question": "   "}),  # 7
    json.dumps({"question": "Answer of the wrong type?", "answer": 3}),  # 8
    json.dumps({"question": "how do quantization methods differ?"}),  # 9: repeats line 2
    json.dumps(["not", "an", "object"]),  # 10
    json.dumps({"question": "Which documents?", "document_ids": ["nope"]}),  # 11
    json.dumps({"question": "Typo?", "answr": "x"}),  # 12
]


def test_good_lines_are_loaded_and_bad_ones_reported(tmp_path):
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")

    outcome = load_user_questions(path, known_document_ids={"gptq", "awq"})

    first, second = outcome.questions
    assert (first.question, first.document_ids, first.user_answer) == (
        "How do quantization methods differ?",
        (),
        None,
    )
    assert (second.question, second.document_ids, second.user_answer) == (
        "Why prune?",
        ("gptq",),
        "To save memory.",
    )
    assert all(q.source == "user" and q.combination_index is None for q in outcome.questions)
    assert second.question_id == question_id("Why prune?", ["gptq"])
    problems = {problem.line: problem.message for problem in outcome.problems}
    assert sorted(problems) == [5, 6, 7, 8, 9, 10, 11, 12]
    assert problems[5].startswith("invalid JSON")
    assert problems[6] == '"question" is missing'
    assert problems[7] == '"question" is empty'
    assert problems[8] == '"answer" must be a string, found int'
    assert problems[9] == "duplicate of line 2"
    assert problems[10] == "expected a JSON object, found list"
    assert problems[11] == "unknown document ids: nope"
    assert "unknown key 'answr'" in problems[12]


def test_unknown_ids_are_accepted_when_the_collection_is_not_given_and_a_missing_file_is_empty(tmp_path):
    path = tmp_path / "questions.jsonl"
    path.write_text(json.dumps({"question": "Which?", "document_ids": ["x", "x"]}), encoding="utf-8")
    [question] = load_user_questions(path).questions
    assert question.document_ids == ("x",)
    missing = load_user_questions(tmp_path / "absent.jsonl")
    assert (missing.questions, missing.problems) == ([], [])
