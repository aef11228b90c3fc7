"""ConTReGen for one question: the trees and answers stages run for it."""

from __future__ import annotations

from insight_assets.core.curation.records import USER, Question, question_id
from insight_assets.core.curation.stages import QUESTIONS as CURATED_QUESTIONS
from insight_assets.core.methods.contregen.settings import AnswersSettings, TreesSettings
from insight_assets.core.methods.contregen.stages.answers import ANSWERS, ANSWERS_STAGE, Written
from insight_assets.core.methods.contregen.stages.trees import TREES, TREES_STAGE
from insight_assets.core.runtime.stage import CollectionScope


def answer_for(scope: CollectionScope, question: str) -> Written:
    """ConTReGen for one question: the trees and answers stages run for it, with the settings the
    collection was built with (its own answer, no baselines or reference paragraphs)."""
    asked = Question(question_id(question, ()), question, (), None, USER)
    one = scope.for_question({CURATED_QUESTIONS: [asked]})
    built = scope.built_settings(TREES.name, TreesSettings)
    one.run(
        TREES_STAGE,
        built.model_copy(update={"questions": "all", "max_questions": None, "reference_questions": 0}),
    )
    writing = scope.built_settings(ANSWERS.name, AnswersSettings)
    return one.run(ANSWERS_STAGE, writing.model_copy(update={"baselines": False}))
