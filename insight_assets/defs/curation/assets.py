"""SCOpE-QA curation assets (InsightGen §3 and Appendix A, C): compressed documents -> generated
questions -> generated answers, the stages declared in ``core/curation/stages/``."""

from insight_assets.core.curation import stages
from insight_assets.defs.stage_assets import stage_assets

ASSETS = stage_assets(stages.STAGES)
