"""ConTReGen's assets: its declared stages (``core/methods/contregen/stages/``), the trees
(top-down planning, retrieval and verification), the answers (bottom-up synthesis, and the
baselines on the same questions), and their scores with the report."""

from insight_assets.core.methods.contregen import stages
from insight_assets.defs.stage_assets import stage_assets

ASSETS = stage_assets(stages.STAGES)
