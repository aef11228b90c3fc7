"""The curation records as warehouse rows, and back.

Column names follow the warehouse (``doc_id``, ``doc_ids``); see ``stores.SCHEMA`` for the tables.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from insight_assets.core.startup.lazy import pa

from .answers import DUPLICATE, KEPT, Answer, kept_pairs
from .records import CompressedDocument, QAPair, Question

if TYPE_CHECKING:
    from insight_assets.core.storage.stores import Warehouse

    from .compression import CompressionOutcome
    from .questions import QuestionOutcome
    from .user_questions import LineProblem


@functools.cache
def _compressed_schema() -> pa.Schema:
    return pa.schema(
        [
            ("collection", pa.string()),
            ("doc_id", pa.string()),
            ("title", pa.string()),
            ("main_topics", pa.list_(pa.string())),
            ("contributions", pa.list_(pa.string())),
            ("conclusions", pa.list_(pa.string())),
            ("key_findings", pa.list_(pa.string())),
            ("text", pa.string()),
            ("tokens", pa.int32()),
            ("source_tokens", pa.int32()),
            ("writer", pa.string()),
            ("status", pa.string()),
            ("error", pa.string()),
        ]
    )


@functools.cache
def _combinations_schema() -> pa.Schema:
    return pa.schema(
        [
            ("collection", pa.string()),
            ("combination_index", pa.int32()),
            ("doc_ids", pa.list_(pa.string())),
            ("status", pa.string()),
            ("error", pa.string()),
        ]
    )


@functools.cache
def _candidates_schema() -> pa.Schema:
    return pa.schema(
        [
            ("collection", pa.string()),
            ("combination_index", pa.int32()),
            ("candidate_index", pa.int32()),
            ("question", pa.string()),
            ("word_count", pa.int32()),
            ("kept", pa.bool_()),
            ("reason", pa.string()),
        ]
    )


@functools.cache
def _questions_schema() -> pa.Schema:
    return pa.schema(
        [
            ("collection", pa.string()),
            ("question_id", pa.string()),
            ("position", pa.int32()),
            ("question", pa.string()),
            ("doc_ids", pa.list_(pa.string())),
            ("combination_index", pa.int32()),
            ("source", pa.string()),
            ("user_answer", pa.string()),
        ]
    )


@functools.cache
def _problems_schema() -> pa.Schema:
    return pa.schema([("collection", pa.string()), ("line", pa.int32()), ("message", pa.string())])


@functools.cache
def _answers_schema() -> pa.Schema:
    return pa.schema(
        [
            ("collection", pa.string()),
            ("question_id", pa.string()),
            ("position", pa.int32()),
            ("question", pa.string()),
            ("answer", pa.string()),
            ("doc_ids", pa.list_(pa.string())),
            ("cited_doc_ids", pa.list_(pa.string())),
            ("source", pa.string()),
            ("answer_source", pa.string()),
            ("status", pa.string()),
            ("duplicate_of", pa.string()),
            ("error", pa.string()),
        ]
    )


def compressed_table(collection: str, outcome: CompressionOutcome, writer: str) -> pa.Table:
    """Compressed documents, plus one ``failed`` row (with the reason) per document that has none."""
    rows = [
        {
            "collection": collection,
            "doc_id": document.document_id,
            "title": document.title,
            "main_topics": list(document.main_topics),
            "contributions": list(document.contributions),
            "conclusions": list(document.conclusions),
            "key_findings": list(document.key_findings),
            "text": document.text,
            "tokens": document.tokens,
            "source_tokens": document.source_tokens,
            "writer": writer,
            "status": "ok",
            "error": None,
        }
        for document in outcome.compressed
    ]
    rows += [
        {
            "collection": collection,
            "doc_id": failure.item,
            "writer": writer,
            "status": "failed",
            "error": failure.error,
        }
        for failure in outcome.failures
    ]
    return pa.Table.from_pylist(rows, schema=_compressed_schema())


def load_compressed(warehouse: Warehouse, collection: str) -> list[CompressedDocument]:
    rows = warehouse.rows(
        "SELECT * FROM compressed_documents WHERE collection = ? AND status = 'ok' ORDER BY doc_id",
        [collection],
    )
    return [
        CompressedDocument(
            document_id=row["doc_id"],
            title=row["title"],
            main_topics=list(row["main_topics"]),
            contributions=list(row["contributions"]),
            conclusions=list(row["conclusions"]),
            key_findings=list(row["key_findings"]),
            text=row["text"],
            tokens=row["tokens"],
            source_tokens=row["source_tokens"],
        )
        for row in rows
    ]


def merge_user_questions(user: Sequence[Question], generated: Sequence[Question]) -> list[Question]:
    """The user's questions first (they are never dropped), then the generated ones that do not
    repeat a user question word for word."""
    asked = {_normal(question.question) for question in user}
    return [*user, *(question for question in generated if _normal(question.question) not in asked)]


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def question_tables(
    collection: str, outcome: QuestionOutcome, questions: Sequence[Question], problems: Sequence[LineProblem]
) -> dict[str, pa.Table]:
    failures = {failure.item: failure.error for failure in outcome.failures}
    combinations = [
        {
            "collection": collection,
            "combination_index": combination.index,
            "doc_ids": list(combination.document_ids),
            "status": "failed" if str(combination.index) in failures else "ok",
            "error": failures.get(str(combination.index)),
        }
        for combination in outcome.combinations
    ]
    candidates = [
        {
            "collection": collection,
            "combination_index": candidate.combination_index,
            "candidate_index": candidate.candidate_index,
            "question": candidate.question,
            "word_count": candidate.word_count,
            "kept": candidate.kept,
            "reason": candidate.reason,
        }
        for candidate in outcome.candidates
    ]
    return {
        "question_combinations": pa.Table.from_pylist(combinations, schema=_combinations_schema()),
        "question_candidates": pa.Table.from_pylist(candidates, schema=_candidates_schema()),
        "generated_questions": pa.Table.from_pylist(
            [
                {
                    "collection": collection,
                    "question_id": question.question_id,
                    "position": position,
                    "question": question.question,
                    "doc_ids": list(question.document_ids),
                    "combination_index": question.combination_index,
                    "source": question.source,
                    "user_answer": question.user_answer,
                }
                for position, question in enumerate(questions)
            ],
            schema=_questions_schema(),
        ),
        "user_question_problems": pa.Table.from_pylist(
            [
                {"collection": collection, "line": problem.line, "message": problem.message}
                for problem in problems
            ],
            schema=_problems_schema(),
        ),
    }


def load_combinations(warehouse: Warehouse, collection: str) -> list[tuple[str, ...]]:
    """The paper combinations of the collection's last question build, in their order."""
    rows = warehouse.rows(
        "SELECT doc_ids FROM question_combinations WHERE collection = ? ORDER BY combination_index",
        [collection],
    )
    return [tuple(row["doc_ids"]) for row in rows]


def load_questions(warehouse: Warehouse, collection: str) -> list[Question]:
    rows = warehouse.rows(
        "SELECT * FROM generated_questions WHERE collection = ? ORDER BY position", [collection]
    )
    return [
        Question(
            question_id=row["question_id"],
            question=row["question"],
            document_ids=tuple(row["doc_ids"]),
            combination_index=row["combination_index"],
            source=row["source"],
            user_answer=row["user_answer"],
        )
        for row in rows
    ]


def answers_table(collection: str, answers: Sequence[Answer]) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "collection": collection,
                "question_id": answer.question_id,
                "position": position,
                "question": answer.question,
                "answer": answer.answer,
                "doc_ids": list(answer.document_ids),
                "cited_doc_ids": list(answer.cited_document_ids),
                "source": answer.source,
                "answer_source": answer.answer_source,
                "status": answer.status,
                "duplicate_of": answer.duplicate_of,
                "error": answer.error,
            }
            for position, answer in enumerate(answers)
        ],
        schema=_answers_schema(),
    )


def load_answers(
    warehouse: Warehouse, collection: str, *, statuses: Sequence[str] = ("kept",)
) -> list[Answer]:
    rows = warehouse.rows(
        "SELECT * FROM generated_answers WHERE collection = ? AND list_contains(?, status) ORDER BY position",
        [collection, list(statuses)],
    )
    return [_answer(row) for row in rows]


def load_answers_and_duplicates(warehouse: Warehouse, collection: str) -> list[Answer]:
    """Every stored answer kept or set aside as a near-duplicate, in question order."""
    return load_answers(warehouse, collection, statuses=(KEPT, DUPLICATE))


def stored_answers(table: pa.Table, *, statuses: Sequence[str] = ("kept",)) -> list[Answer]:
    """The answers of ``answers_table``'s rows with ``statuses``, as ``load_answers`` reads them back."""
    return [_answer(row) for row in table.to_pylist() if row["status"] in statuses]


def _answer(row: dict) -> Answer:
    return Answer(
        question_id=row["question_id"],
        question=row["question"],
        answer=row["answer"],
        document_ids=tuple(row["doc_ids"]),
        cited_document_ids=tuple(row["cited_doc_ids"]),
        source=row["source"],
        answer_source=row["answer_source"],
        status=row["status"],
        duplicate_of=row["duplicate_of"],
        error=row["error"],
    )


def load_pairs(warehouse: Warehouse, collection: str, limit: int | None = None) -> list[QAPair]:
    """The collection's kept question-answer pairs, in question order (the first ``limit``)."""
    pairs = kept_pairs(load_answers(warehouse, collection))
    return pairs[:limit] if limit is not None else pairs


def first_question(warehouse: Warehouse, collection: str) -> str | None:
    """The collection's first question of its own (questions.jsonl), else its first generated one
    that was answered and kept."""
    rows = warehouse.rows(
        """SELECT question FROM generated_answers WHERE collection = ? AND status = 'kept'
           ORDER BY source = 'user' DESC, position LIMIT 1""",
        [collection],
    )
    return rows[0]["question"] if rows else None
