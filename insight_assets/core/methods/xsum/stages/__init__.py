"""XSum's stages, one module per asset (see ``core/runtime/stage.py``): each holds what its stage hands
on, its result, its work, what it keeps and its declaration; the settings models are in
``../settings.py``. ``for_question`` runs them for one topic (``ask``, ``summarize --topic``)."""

from .answers import ANSWERS, ANSWERS_STAGE, TARGETS
from .for_question import TopicSummary, summary_for
from .questions import QUESTIONS, QUESTIONS_STAGE
from .scores import SCORES, SCORES_STAGE
from .summaries import SUMMARIES, SUMMARIES_STAGE

STAGES = (QUESTIONS_STAGE, ANSWERS_STAGE, SUMMARIES_STAGE, SCORES_STAGE)

__all__ = [
    "ANSWERS",
    "ANSWERS_STAGE",
    "QUESTIONS",
    "QUESTIONS_STAGE",
    "SCORES",
    "SCORES_STAGE",
    "STAGES",
    "SUMMARIES",
    "SUMMARIES_STAGE",
    "TARGETS",
    "TopicSummary",
    "summary_for",
]
