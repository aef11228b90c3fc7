"""XSum for one topic: the questions, answers and summaries stages run for that one target."""

from __future__ import annotations

from dataclasses import dataclass

from insight_assets.core.methods.xsum import load
from insight_assets.core.methods.xsum.schemas import SummaryTarget, XSumAnswerRecord
from insight_assets.core.methods.xsum.settings import AnswersSettings, QuestionsSettings, SummariesSettings
from insight_assets.core.methods.xsum.stages.answers import ANSWERS, ANSWERS_STAGE, TARGET_CHOICE
from insight_assets.core.methods.xsum.stages.questions import PAPER_CHOICE, QUESTIONS, QUESTIONS_STAGE
from insight_assets.core.methods.xsum.stages.summaries import SUMMARIES, SUMMARIES_STAGE, Summarized
from insight_assets.core.runtime.stage import CollectionScope


@dataclass(frozen=True)
class TopicSummary:
    questions: list  # the questions asked of the topic's papers (``XSumQuestion``)
    answers: list[XSumAnswerRecord]
    summarized: Summarized


def summary_for(scope: CollectionScope, topic: str, doc_ids: list[str]) -> TopicSummary:
    """XSum's summary of one ``topic`` over the papers ``doc_ids``: the questions, answers and
    summaries stages for that one target, with the settings the collection was built with (the
    editor's summary alone, no baselines)."""
    asking = scope.built_settings(QUESTIONS.name, QuestionsSettings)
    papers = load.load_papers(scope.warehouse, scope.collection, asking.abstract_fallback_tokens)
    target = SummaryTarget("ask", "user", topic, tuple(doc_ids))
    question = scope.for_question(
        {
            PAPER_CHOICE: [paper for paper in papers if paper.doc_id in doc_ids],
            TARGET_CHOICE: ([target], []),
        }
    )
    asked = question.run(QUESTIONS_STAGE, asking)
    answered = question.run(ANSWERS_STAGE, scope.built_settings(ANSWERS.name, AnswersSettings))
    editor_only = scope.built_settings(SUMMARIES.name, SummariesSettings).model_copy(
        update={"baselines": False}
    )
    return TopicSummary(asked.outcome.questions, answered.answers, question.run(SUMMARIES_STAGE, editor_only))
