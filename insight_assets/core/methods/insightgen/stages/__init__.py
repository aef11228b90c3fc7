"""InsightGen's stages, one module per asset (see ``core/runtime/stage.py``): each holds what its stage
hands on, its result, its work, what it keeps and its declaration; the settings models are in
``../settings.py``. The judging stage runs once per judge of its panel, each with its own client;
``for_question`` finds the insights for one answered question (``ask``)."""

from .for_question import insights_for
from .insights import INSIGHTS, INSIGHTS_STAGE, Found
from .judge_scores import JUDGE_SCORES, JUDGE_STAGE

STAGES = (INSIGHTS_STAGE, JUDGE_STAGE)

__all__ = ["INSIGHTS", "INSIGHTS_STAGE", "JUDGE_SCORES", "JUDGE_STAGE", "STAGES", "Found", "insights_for"]
