"""The curation's stages, one per asset (see ``core/stage.py``): the work the build and the dry run
share. The methods read the curated answers through ``answers_of`` and ``kept_pairs_of``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import ingest
from ..stage import CollectionScope, NothingToDo
from .answers import DUPLICATE, KEPT, Answer, AnswerOutcome, AnswerSettings, generate_answers, kept_pairs
from .compression import CompressionOutcome, CompressionSettings, compress_documents, papers_to_compress
from .questions import QuestionOutcome, generate_questions
from .records import QAPair, Question
from .tables import load_answers, load_compressed, load_questions, merge_user_questions
from .user_questions import USER_QUESTIONS_FILE, UserQuestionsOutcome, load_user_questions

COMPRESSED, QUESTIONS, ANSWERS = "compressed_documents", "generated_questions", "generated_answers"


def compress(scope: CollectionScope, settings: CompressionSettings) -> CompressionOutcome:
    """Each parsed paper compressed to its topics, contributions and findings."""
    papers = papers_to_compress(ingest.load_documents(scope.warehouse, scope.collection))
    if not papers:
        raise NothingToDo("no parsed documents to compress (see `parsed_documents`' problems).")
    outcome = compress_documents(scope.client, papers, settings)
    scope.plan(COMPRESSED, outcome.compressed)
    return outcome


@dataclass(frozen=True)
class Asked:
    user: UserQuestionsOutcome  # the collection's own questions.jsonl
    outcome: QuestionOutcome  # the generated ones
    questions: list[Question]  # both, the user's first


def ask(scope: CollectionScope, settings) -> Asked:
    """Questions spanning several papers, asked of combinations of their compressed digests, after
    the collection's own; ``settings``: ``QuestionSettings``."""
    compressed = scope.upstream(COMPRESSED, lambda: load_compressed(scope.warehouse, scope.collection))
    if not compressed:
        raise NothingToDo(
            "no compressed documents to ask questions about: every compression failed (see its failures)."
        )
    user = load_user_questions(
        scope.folder / USER_QUESTIONS_FILE, known_document_ids={doc.document_id for doc in compressed}
    )
    outcome = generate_questions(scope.client, compressed, settings, scope.embed)
    questions = merge_user_questions(user.questions, outcome.questions)
    scope.plan(QUESTIONS, questions)
    return Asked(user, outcome, questions)


def answer(scope: CollectionScope, settings: AnswerSettings) -> AnswerOutcome:
    """An answer to every question from its documents' digests, near-duplicates set aside."""
    compressed = scope.upstream(COMPRESSED, lambda: load_compressed(scope.warehouse, scope.collection))
    questions = questions_of(scope)
    if not questions:
        raise NothingToDo("no questions to answer: `generated_questions` kept none.")
    outcome = generate_answers(scope.client, questions, compressed, settings, scope.embed)
    scope.plan(ANSWERS, outcome.answers)
    return outcome


def questions_of(scope: CollectionScope) -> list[Question]:
    """The collection's curated questions, the user's first."""
    return scope.upstream(QUESTIONS, lambda: load_questions(scope.warehouse, scope.collection))


def answers_of(scope: CollectionScope) -> list[Answer]:
    """Every curated answer kept or set aside as a near-duplicate, in question order."""
    return scope.upstream(
        ANSWERS, lambda: load_answers(scope.warehouse, scope.collection, statuses=(KEPT, DUPLICATE))
    )


def kept_pairs_of(scope: CollectionScope, limit: int | None = None) -> list[QAPair]:
    """The kept question-answer pairs, in question order (the first ``limit``): what the methods ask."""
    pairs = kept_pairs(answers_of(scope))
    return pairs[:limit] if limit is not None else pairs
