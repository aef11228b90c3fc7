"""InsightGen for one answered question: the insights stage run for it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from insight_assets.core.curation.stages import ANSWERS as CURATED_ANSWERS
from insight_assets.core.methods.insightgen.settings import InsightsSettings
from insight_assets.core.methods.insightgen.stages.insights import INSIGHTS, INSIGHTS_STAGE, Found
from insight_assets.core.runtime.stage import CollectionScope

if TYPE_CHECKING:
    from insight_assets.core.curation.answers import Answer


def insights_for(scope: CollectionScope, answered: Answer) -> Found:
    """InsightGen's insights (InsightGen alone, no baselines) for one ``answered`` question
    (``curation.stages.answer_for``): the insights stage run for it, with the settings the
    collection was built with."""
    built = scope.built_settings(INSIGHTS, InsightsSettings)
    return scope.for_question({CURATED_ANSWERS: [answered]}).run(
        INSIGHTS_STAGE, built.model_copy(update={"methods": ["insightgen"], "max_questions": None})
    )
