"""The curation for one question of the user's: answered as the build answers the collection's own."""

from __future__ import annotations

from insight_assets.core.curation.answers import KEPT, Answer, AnswersSettings
from insight_assets.core.curation.records import USER, Question, question_id
from insight_assets.core.curation.stages.generated_answers import ANSWER_STAGE, ANSWERS
from insight_assets.core.curation.stages.generated_questions import QUESTIONS
from insight_assets.core.runtime.stage import CollectionScope
from insight_assets.core.runtime.stage_output import stop_if_over_budget


def answer_for(scope: CollectionScope, question: str, given: str | None = None) -> Answer:
    """A question of the user's answered as the build answers the collection's own questions (the
    answer stage, with the settings the collection was built with; its documents the ones most
    like it), or ``given``, the user's answer."""
    asked = Question(
        question_id=question_id(question, ()),
        question=question,
        document_ids=(),
        combination_index=None,
        source=USER,
    )
    if given is not None:
        return Answer(asked.question_id, question, given, (), (), USER, USER, KEPT)
    outcome = scope.for_question({QUESTIONS: [asked]}).run(
        ANSWER_STAGE, scope.built_settings(ANSWERS.name, AnswersSettings)
    )
    stop_if_over_budget(outcome.budget_error)
    (found,) = outcome.answers
    return found
