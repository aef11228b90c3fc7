"""InsightGen's stage assets (``core/methods/insightgen/stages/``): the insights of InsightGen
and its four baselines for every question-answer pair (§4, §5.1), and the judges' scores of them
(§5.3, Appendix D)."""

from insight_assets.core.methods.insightgen import stages
from insight_assets.defs.stage_assets import stage_assets

ASSETS = stage_assets(stages.STAGES)
