"""The code location: every asset, check, job, schedule, sensor and resource of insight_assets."""

import dagster as dg

from insight_assets.defs import automation, curation, estimate, evaluation, ingestion, insights, themes
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource

defs = dg.Definitions(
    assets=dg.load_assets_from_modules([ingestion, curation, themes, insights, evaluation]),
    jobs=[automation.build_collection_job, estimate.estimate_llm_cost],
    sensors=[automation.collection_folders_sensor],
    schedules=[automation.nightly_reingest],
    resources={
        "storage": StorageResource(),
        "embedder": EmbedderResource(),
        "llm": LLMResource.from_environment(),
    },
)
