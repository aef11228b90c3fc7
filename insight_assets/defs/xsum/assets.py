"""XSum's assets: its declared stages (``core/methods/xsum/stages/``), questions per paper,
answers per target, summaries (XSum and its baselines), and their scores with the report."""

from insight_assets.core.methods.xsum import stages
from insight_assets.defs.stage_assets import stage_assets

ASSETS = stage_assets(stages.STAGES)
