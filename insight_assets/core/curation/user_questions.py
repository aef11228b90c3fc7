"""Questions a user adds to a collection, from a JSON Lines file (``questions.jsonl``).

One JSON object per line::

    {"question": "How do ...?", "answer": "optional: your answer", "document_ids": ["optional", "ids"]}

``question`` is required, a non-empty string. ``answer``, when given, is used as it is and not
sent to a model. ``document_ids`` names the documents the question is about; without it the
answer is written from the documents most similar to the question. Blank lines and lines
starting with ``#`` are skipped. Every other line that cannot be used is reported with its line
number (1-based) and left out: invalid JSON, not an object, a missing, empty or non-string
question, an empty or non-string answer, document ids that are not a list of strings or (when
the known ids are given) name no document of the collection, an unknown key, and a question
that repeats an earlier one (compared ignoring case and spacing).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..jsonl import LineProblem, UnusableLine, read_lines
from .records import USER, Question, question_id

# The file of a collection's own questions, in its folder.
USER_QUESTIONS_FILE = "questions.jsonl"
_KEYS = ("question", "answer", "document_ids")


@dataclass(frozen=True)
class UserQuestionsOutcome:
    questions: list[Question]
    problems: list[LineProblem]


def _parse(value: Any, known_document_ids: Collection[str] | None) -> tuple[str, str | None, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise UnusableLine(f"expected a JSON object, found {type(value).__name__}")
    unknown = sorted(set(value) - set(_KEYS))
    if unknown:
        raise UnusableLine(f"unknown key {', '.join(map(repr, unknown))}; the keys are {', '.join(_KEYS)}")
    question = value.get("question")
    if question is None:
        raise UnusableLine('"question" is missing')
    if not isinstance(question, str):
        raise UnusableLine(f'"question" must be a string, found {type(question).__name__}')
    question = " ".join(question.split())
    if not question:
        raise UnusableLine('"question" is empty')
    answer = value.get("answer")
    if answer is not None:
        if not isinstance(answer, str):
            raise UnusableLine(f'"answer" must be a string, found {type(answer).__name__}')
        answer = answer.strip()
        if not answer:
            raise UnusableLine('"answer" is empty; leave it out to have the answer generated')
    ids = value.get("document_ids", [])
    if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
        raise UnusableLine('"document_ids" must be a list of non-empty strings')
    if known_document_ids is not None:
        missing = [i for i in ids if i not in known_document_ids]
        if missing:
            raise UnusableLine(f"unknown document ids: {', '.join(missing)}")
    return question, answer, tuple(dict.fromkeys(ids))


def load_user_questions(
    path: Path, known_document_ids: Collection[str] | None = None
) -> UserQuestionsOutcome:
    """The usable questions of ``path`` (none when it does not exist) and the problems found."""

    def parse(value: Any) -> tuple[Question, str]:
        question, answer, ids = _parse(value, known_document_ids)
        asked = Question(
            question_id=question_id(question, ids),
            question=question,
            document_ids=ids,
            combination_index=None,
            source=USER,
            user_answer=answer,
        )
        return asked, question.casefold()

    questions, problems = read_lines(path, parse)
    return UserQuestionsOutcome(questions, problems)
