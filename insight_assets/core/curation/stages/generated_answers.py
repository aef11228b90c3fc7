"""The curation's answers stage: an answer to every question from its documents' digests,
near-duplicates set aside; and the curated answers as the methods read them."""

from __future__ import annotations

from collections import Counter

from insight_assets.core.curation.answers import (
    ANSWER_QUESTION,
    Answer,
    AnswerOutcome,
    AnswersSettings,
    citations_valid,
    generate_answers,
    kept_pairs,
)
from insight_assets.core.curation.records import QAPair
from insight_assets.core.curation.stages.compressed_documents import COMPRESSED
from insight_assets.core.curation.stages.generated_questions import QUESTIONS, questions_of
from insight_assets.core.curation.tables import answers_table, load_answers_and_duplicates, stored_answers
from insight_assets.core.runtime.stage import Check, CollectionScope, Handoff, NothingToDo, Stage
from insight_assets.core.runtime.stage_output import (
    CheckOutcome,
    Json,
    StageOutput,
    preview,
    stop_if_over_budget,
)
from insight_assets.core.startup.lazy import np

# Every curated answer kept or set aside as a near-duplicate, in question order.
ANSWERS = Handoff("generated_answers", load_answers_and_duplicates)


def answer(scope: CollectionScope, settings: AnswersSettings) -> AnswerOutcome:
    """An answer to every question from its documents' digests, near-duplicates set aside."""
    compressed = scope.upstream(COMPRESSED)
    questions = questions_of(scope)
    if not questions:
        raise NothingToDo("no questions to answer: `generated_questions` kept none.")
    return generate_answers(scope.client, questions, compressed, settings, scope.embed)


def answers_of(scope: CollectionScope) -> list[Answer]:
    """Every curated answer kept or set aside as a near-duplicate, in question order."""
    return scope.upstream(ANSWERS)


def kept_pairs_of(scope: CollectionScope, limit: int | None = None) -> list[QAPair]:
    """The kept question-answer pairs, in question order (the first ``limit``): what the methods ask."""
    pairs = kept_pairs(answers_of(scope))
    return pairs[:limit] if limit is not None else pairs


CITATIONS_NAME_DOCUMENTS = "citations_name_combination_documents"
EVERY_QUESTION_ANSWERED = "every_question_answered"


def output(scope: CollectionScope, settings: AnswersSettings, outcome: AnswerOutcome) -> StageOutput:
    stop_if_over_budget(outcome.budget_error)
    table = answers_table(scope.collection, outcome.answers)
    by_status = dict(Counter(answer.status for answer in outcome.answers))
    kept = [answer for answer in outcome.answers if answer.status == "kept"]
    # As stored: the table's rows read back, as the methods will read them.
    invalid = [answer.question_id for answer in stored_answers(table) if not citations_valid(answer)]
    shown = [
        {"question": a.question, "answer": a.answer[:300], "cited": len(a.cited_document_ids)} for a in kept
    ]
    return StageOutput(
        tables={"generated_answers": table},
        metadata={
            "dagster/row_count": len(kept),
            "answers_by_status": Json(by_status),
            "mean_citations": round(float(np.mean([len(a.cited_document_ids) for a in kept])), 2)
            if kept
            else 0.0,
            "preview": preview(shown, ["question", "answer", "cited"], empty="No answers."),
        },
        checks=[
            CheckOutcome(
                CITATIONS_NAME_DOCUMENTS,
                passed=not invalid,
                metadata={"answers_checked": len(kept), "invalid": ", ".join(invalid) or "none"},
            ),
            _every_question_answered(outcome.answers),
        ],
    )


def _every_question_answered(found) -> CheckOutcome:
    failed = [{"question": a.question, "error": a.error} for a in found if a.status == "failed"]
    return CheckOutcome(
        EVERY_QUESTION_ANSWERED,
        passed=not failed,
        warning=True,
        metadata={"failed": preview(failed, ["question", "error"], empty="None.")},
    )


ANSWER_STAGE = Stage(
    ANSWERS.name,
    "curation",
    "An answer per question from its combination's compressed documents, citing them by exact "
    "title; answers nearly identical (cosine >= 0.9) to a kept answer are removed.",
    AnswersSettings,
    reads=(QUESTIONS.name,),
    run=answer,
    hands=(ANSWERS.of(lambda outcome: outcome.answers),),
    output=output,
    tasks=(ANSWER_QUESTION,),
    checks=(
        Check(
            CITATIONS_NAME_DOCUMENTS,
            "Every kept answer, as stored, cites at least one document, and only documents it was "
            "written from.",
        ),
        Check(EVERY_QUESTION_ANSWERED),
    ),
    embedder=True,
)
