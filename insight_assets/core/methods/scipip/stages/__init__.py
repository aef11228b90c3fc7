"""SciPIP's stages, one module per asset (see ``core/runtime/stage.py``): each holds what its stage
hands on, its result, its work, what it keeps and its declaration; the settings models are in
``../settings.py``. The scoring stage judges the idea sets once per judge of its panel, each with
its own client. ``for_question.ideas_for`` is what ``insight-assets ideas``, ``ask --method scipip``
and the MCP server run: the ideas stage's own path for one background, with the settings the
collection was built with."""

from .for_question import ideas_for
from .ideas import IDEAS, IDEAS_STAGE
from .retrievals import RETRIEVALS, RETRIEVALS_STAGE
from .scores import SCORES, SCORES_STAGE
from .summaries import SUMMARIES, SUMMARIES_STAGE

STAGES = (SUMMARIES_STAGE, RETRIEVALS_STAGE, IDEAS_STAGE, SCORES_STAGE)

__all__ = [
    "IDEAS",
    "IDEAS_STAGE",
    "RETRIEVALS",
    "RETRIEVALS_STAGE",
    "SCORES",
    "SCORES_STAGE",
    "STAGES",
    "SUMMARIES",
    "SUMMARIES_STAGE",
    "ideas_for",
]
