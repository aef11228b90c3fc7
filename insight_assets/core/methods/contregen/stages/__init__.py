"""ConTReGen's stages, one module per asset (see ``core/runtime/stage.py``): each holds what its stage
hands on, its result, its work, what it keeps and its declaration; the settings models are in
``../settings.py``. ``for_question`` runs the trees and answers stages for one question (``ask``)."""

from .answers import ANSWERS, ANSWERS_STAGE, Written
from .for_question import answer_for
from .scores import SCORES, SCORES_STAGE
from .trees import TREES, TREES_STAGE

STAGES = (TREES_STAGE, ANSWERS_STAGE, SCORES_STAGE)

__all__ = [
    "ANSWERS",
    "ANSWERS_STAGE",
    "SCORES",
    "SCORES_STAGE",
    "STAGES",
    "TREES",
    "TREES_STAGE",
    "Written",
    "answer_for",
]
