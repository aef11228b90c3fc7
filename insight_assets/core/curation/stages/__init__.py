"""The curation's stages, one module per asset (see ``core/runtime/stage.py``): each holds what its
stage hands on, its work, what it keeps and its declaration. The methods read the curated questions
and answers through ``questions_of``, ``answers_of`` and ``kept_pairs_of``; ``for_question`` answers
one question of the user's."""

from .compressed_documents import COMPRESS_STAGE, COMPRESSED
from .for_question import answer_for
from .generated_answers import ANSWER_STAGE, ANSWERS, answers_of, kept_pairs_of
from .generated_questions import QUESTIONS, QUESTIONS_STAGE, questions_of

STAGES = (COMPRESS_STAGE, QUESTIONS_STAGE, ANSWER_STAGE)

__all__ = [
    "ANSWERS",
    "ANSWER_STAGE",
    "COMPRESSED",
    "COMPRESS_STAGE",
    "QUESTIONS",
    "QUESTIONS_STAGE",
    "STAGES",
    "answer_for",
    "answers_of",
    "kept_pairs_of",
    "questions_of",
]
