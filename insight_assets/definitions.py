"""The code location: every asset, check, job, schedule, sensor and resource of insight_assets."""

from insight_assets.core.runtime.heap import loading_for_good

# Dagster, our modules and every definition live as long as the process, so they load with the
# collector paused (core/runtime/heap.py): in a fresh process Dagster's own import otherwise spends 60 ms
# (a seventh of it) in collections that free almost nothing.
with loading_for_good():
    import dagster as dg

    from insight_assets.defs import automation, estimate, sources
    from insight_assets.defs.catalog import ALL_ASSETS
    from insight_assets.defs.execution import deployment_executor
    from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource

    defs = dg.Definitions(
        assets=[sources.collection_files, *ALL_ASSETS],
        jobs=[automation.build_collection_job, estimate.estimate_llm_cost],
        sensors=[automation.collection_folders_sensor],
        schedules=[automation.nightly_reingest],
        resources={
            "storage": StorageResource(),
            "embedder": EmbedderResource(),
            "llm": LLMResource(),
        },
        # Dagster's default, or the Dask cluster that INSIGHT_ASSETS_DASK_SCHEDULER names.
        executor=deployment_executor(),
    )


def build_collection_job() -> dg.JobDefinition:
    """The build job as this code location defines it: what ``dg.reconstructable`` points a Dask
    cluster's workers at, so that each loads it itself."""
    return defs.resolve_job_def("build_collection")
