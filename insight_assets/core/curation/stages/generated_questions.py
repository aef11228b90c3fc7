"""The curation's questions stage: questions spanning several papers, after the collection's own."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from insight_assets.core.curation.combinations import QuestionsSettings
from insight_assets.core.curation.question_tasks import GENERATE_QUESTIONS, REFINE_QUESTIONS
from insight_assets.core.curation.questions import QuestionOutcome, generate_questions
from insight_assets.core.curation.records import Question
from insight_assets.core.curation.stages.compressed_documents import COMPRESSED
from insight_assets.core.curation.tables import (
    load_combinations,
    load_questions,
    merge_user_questions,
    question_tables,
)
from insight_assets.core.curation.user_questions import (
    USER_QUESTIONS_FILE,
    UserQuestionsOutcome,
    load_user_questions,
)
from insight_assets.core.runtime.stage import Check, CollectionScope, Handoff, NothingToDo, Stage
from insight_assets.core.runtime.stage_output import (
    CheckOutcome,
    Json,
    StageOutput,
    preview,
    stop_if_over_budget,
)

QUESTIONS = Handoff("generated_questions", load_questions)


@dataclass(frozen=True)
class Asked:
    user: UserQuestionsOutcome  # the collection's own questions.jsonl
    outcome: QuestionOutcome  # the generated ones
    questions: list[Question]  # both, the user's first


def ask(scope: CollectionScope, settings: QuestionsSettings) -> Asked:
    """Questions spanning several papers, asked of combinations of their compressed digests, after
    the collection's own."""
    compressed = scope.upstream(COMPRESSED)
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
    return Asked(user, outcome, merge_user_questions(user.questions, outcome.questions))


def questions_of(scope: CollectionScope) -> list[Question]:
    """The collection's curated questions, the user's first."""
    return scope.upstream(QUESTIONS)


USER_QUESTIONS_READABLE = "user_questions_readable"


def output(scope: CollectionScope, settings: QuestionsSettings, asked: Asked) -> StageOutput:
    user, outcome, kept_questions = asked.user, asked.outcome, asked.questions
    stop_if_over_budget(outcome.budget_error)
    kept = [candidate for candidate in outcome.candidates if candidate.kept]
    # "near-duplicate of q-…" counts as one reason
    reasons = Counter(c.reason.split(" of ")[0] for c in outcome.candidates if not c.kept)
    problems = [{"line": problem.line, "message": problem.message} for problem in user.problems]
    shown = [
        {"source": q.source, "question": q.question, "documents": len(q.document_ids)} for q in kept_questions
    ]
    return StageOutput(
        tables=question_tables(scope.collection, outcome, kept_questions, user.problems),
        metadata={
            "dagster/row_count": len(kept_questions),
            "generated_questions": len(outcome.questions),
            "user_questions": len(user.questions),
            "target_questions": outcome.target,
            "combinations": len(outcome.combinations),
            "combinations_failed": len(outcome.failures),
            "candidates": len(outcome.candidates),
            "candidates_kept": len(kept),
            "dropped_by_reason": Json(dict(reasons)),
            "preview": preview(shown, ["source", "question", "documents"], empty="No questions."),
            "user_question_problems": preview(problems, ["line", "message"], empty="None."),
        },
        checks=[
            CheckOutcome(
                USER_QUESTIONS_READABLE,
                passed=not user.problems,
                warning=True,
                metadata={"bad_lines": len(user.problems), "file": str(scope.folder / USER_QUESTIONS_FILE)},
            )
        ],
    )


QUESTIONS_STAGE = Stage(
    QUESTIONS.name,
    "curation",
    "Open-ended, conceptual questions spanning several papers, plus the collection's own "
    "`questions.jsonl`. Each question keeps the ids of the documents it was asked about.",
    QuestionsSettings,
    reads=(COMPRESSED.name,),
    run=ask,
    hands=(QUESTIONS.of(lambda asked: asked.questions),),
    output=output,
    tasks=(GENERATE_QUESTIONS, REFINE_QUESTIONS),
    checks=(Check(USER_QUESTIONS_READABLE),),
    embedder=True,
)
