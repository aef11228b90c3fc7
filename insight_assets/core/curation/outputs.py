"""What the curation's stages keep (see ``core/runtime/stage_output.py``): the tables each writes, and its report."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from insight_assets.core.runtime.stage_output import (
    CheckOutcome,
    Json,
    StageOutput,
    preview,
    stop_if_over_budget,
)
from insight_assets.core.startup.lazy import np

from .answers import AnswerOutcome, AnswersSettings, citations_valid
from .compression import COMPRESS_DOCUMENT, CompressionOutcome, CompressionSettings
from .tables import answers_table, compressed_table, question_tables, stored_answers
from .user_questions import USER_QUESTIONS_FILE

if TYPE_CHECKING:
    from insight_assets.core.runtime.stage import CollectionScope

    from .combinations import QuestionsSettings
    from .stages import Asked

EVERY_DOCUMENT_COMPRESSED = "every_document_compressed"
USER_QUESTIONS_READABLE = "user_questions_readable"
CITATIONS_NAME_DOCUMENTS = "citations_name_combination_documents"
EVERY_QUESTION_ANSWERED = "every_question_answered"


def compressed(
    scope: CollectionScope, settings: CompressionSettings, outcome: CompressionOutcome
) -> StageOutput:
    stop_if_over_budget(outcome.budget_error)
    writer = scope.client.writer_label(COMPRESS_DOCUMENT)
    rows = [
        {
            "title": doc.title[:80],
            "tokens": doc.tokens,
            "source_tokens": doc.source_tokens,
            "topics": "; ".join(doc.main_topics),
        }
        for doc in outcome.compressed
    ]
    failures = [{"document": failure.item, "error": failure.error} for failure in outcome.failures]
    source_tokens = sum(doc.source_tokens for doc in outcome.compressed)
    tokens = sum(doc.tokens for doc in outcome.compressed)
    return StageOutput(
        tables={"compressed_documents": compressed_table(scope.collection, outcome, writer)},
        metadata={
            "dagster/row_count": len(outcome.compressed),
            "documents_failed": len(outcome.failures),
            "compressed_tokens": tokens,
            "source_tokens": source_tokens,
            "compression_ratio": round(tokens / source_tokens, 4) if source_tokens else 0.0,
            "preview": preview(rows, ["title", "tokens", "source_tokens", "topics"], empty="No documents."),
            "failures": preview(failures, ["document", "error"], empty="None."),
        },
        checks=[
            CheckOutcome(
                EVERY_DOCUMENT_COMPRESSED,
                passed=not outcome.failures,
                warning=True,
                metadata={"failed": len(outcome.failures)},
            )
        ],
    )


def questions(scope: CollectionScope, settings: QuestionsSettings, asked: Asked) -> StageOutput:
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


def answers(scope: CollectionScope, settings: AnswersSettings, outcome: AnswerOutcome) -> StageOutput:
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
