"""The curation's stages, one per asset (see ``core/runtime/stage.py``): the work the build and the dry run
share, and their declarations (``STAGES``). The methods read the curated answers through
``answers_of`` and ``kept_pairs_of``.
"""

from __future__ import annotations

from dataclasses import dataclass

from insight_assets.core.ingestion import ingest
from insight_assets.core.runtime.stage import Check, CollectionScope, NothingToDo, Stage
from insight_assets.core.runtime.stage_output import stop_if_over_budget

from . import outputs
from .answers import (
    ANSWER_QUESTION,
    DUPLICATE,
    KEPT,
    Answer,
    AnswerOutcome,
    AnswersSettings,
    generate_answers,
    kept_pairs,
)
from .combinations import QuestionsSettings
from .compression import (
    COMPRESS_DOCUMENT,
    CompressionOutcome,
    CompressionSettings,
    compress_documents,
    papers_to_compress,
)
from .question_tasks import GENERATE_QUESTIONS, REFINE_QUESTIONS
from .questions import QuestionOutcome, generate_questions
from .records import USER, QAPair, Question, question_id
from .tables import load_answers, load_combinations, load_compressed, load_questions, merge_user_questions
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


def ask(scope: CollectionScope, settings: QuestionsSettings) -> Asked:
    """Questions spanning several papers, asked of combinations of their compressed digests, after
    the collection's own."""
    compressed = scope.upstream(COMPRESSED, lambda: load_compressed(scope.warehouse, scope.collection))
    if not compressed:
        raise NothingToDo(
            "no compressed documents to ask questions about: every compression failed (see its failures)."
        )
    user = load_user_questions(
        scope.folder / USER_QUESTIONS_FILE, known_document_ids={doc.document_id for doc in compressed}
    )
    # The last build's combinations: a changed collection keeps those whose papers are still there.
    previous = load_combinations(scope.warehouse, scope.collection)
    outcome = generate_questions(scope.client, compressed, settings, scope.embed, previous)
    questions = merge_user_questions(user.questions, outcome.questions)
    scope.plan(QUESTIONS, questions)
    return Asked(user, outcome, questions)


def answer(scope: CollectionScope, settings: AnswersSettings) -> AnswerOutcome:
    """An answer to every question from its documents' digests, near-duplicates set aside."""
    compressed = scope.upstream(COMPRESSED, lambda: load_compressed(scope.warehouse, scope.collection))
    questions = questions_of(scope)
    if not questions:
        raise NothingToDo("no questions to answer: `generated_questions` kept none.")
    outcome = generate_answers(scope.client, questions, compressed, settings, scope.embed)
    scope.plan(ANSWERS, outcome.answers)
    return outcome


def answer_for(scope: CollectionScope, question: str, given: str | None = None) -> Answer:
    """A question of the user's answered as the build answers the collection's own questions (the
    answer stage, with the settings the collection was built with; its documents the ones most
    like it), or ``given``, the user's answer; either stands in for the stored answers downstream."""
    asked = Question(
        question_id=question_id(question, ()),
        question=question,
        document_ids=(),
        combination_index=None,
        source=USER,
    )
    if given is not None:
        found = Answer(asked.question_id, question, given, (), (), USER, USER, KEPT)
        scope.give(ANSWERS, [found])
        return found
    scope.give(QUESTIONS, [asked])
    outcome = answer(scope, scope.built_settings(ANSWERS, AnswersSettings))
    stop_if_over_budget(outcome.budget_error)
    (found,) = outcome.answers
    return found


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


STAGES = (
    Stage(
        COMPRESSED,
        "curation",
        "Each paper's main topics, contributions, conclusions and key findings, without references, "
        "formatting or boilerplate: compact enough that several papers fit in one prompt.",
        CompressionSettings,
        reads=("parsed_documents",),
        run=compress,
        output=outputs.compressed,
        tasks=(COMPRESS_DOCUMENT,),
        checks=(Check(outputs.EVERY_DOCUMENT_COMPRESSED),),
    ),
    Stage(
        QUESTIONS,
        "curation",
        "Open-ended, conceptual questions spanning several papers, plus the collection's own "
        "`questions.jsonl`. Each question keeps the ids of the documents it was asked about.",
        QuestionsSettings,
        reads=(COMPRESSED,),
        run=ask,
        output=outputs.questions,
        tasks=(GENERATE_QUESTIONS, REFINE_QUESTIONS),
        checks=(Check(outputs.USER_QUESTIONS_READABLE),),
        embedder=True,
    ),
    Stage(
        ANSWERS,
        "curation",
        "An answer per question from its combination's compressed documents, citing them by exact "
        "title; answers nearly identical (cosine >= 0.9) to a kept answer are removed.",
        AnswersSettings,
        reads=(QUESTIONS,),
        run=answer,
        output=outputs.answers,
        tasks=(ANSWER_QUESTION,),
        checks=(
            Check(
                outputs.CITATIONS_NAME_DOCUMENTS,
                "Every kept answer, as stored, cites at least one document, and only documents it was "
                "written from.",
            ),
            Check(outputs.EVERY_QUESTION_ANSWERED),
        ),
        embedder=True,
    ),
)
