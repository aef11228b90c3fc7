"""The code location: every asset, check, job, schedule, sensor and resource of insight_assets."""

import dagster as dg

from insight_assets.defs import automation, ingestion
from insight_assets.defs.resources import EmbedderResource, StorageResource

defs = dg.Definitions(
    assets=dg.load_assets_from_modules([ingestion]),
    jobs=[automation.build_collection_job],
    sensors=[automation.collection_folders_sensor],
    schedules=[automation.nightly_reingest],
    resources={"storage": StorageResource(), "embedder": EmbedderResource()},
)
