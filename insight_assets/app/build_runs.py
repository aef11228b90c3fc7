"""The three ways a build's run executes: in this process (offline, a local model), in processes of
its own on this machine (a hosted model: steps side by side), or on a Dask cluster's workers. Each
records the run in the instance like any other, and none raises for a failed step."""

from __future__ import annotations

import contextlib
import sys

from insight_assets.app import progress

# Step events go to the run log (and the UI); the terminal gets INFO lines only.
# The console logger of a run: Dagster's log lines only with --verbose (the progress view, the
# summary and the failed steps' reasons say what a person needs; the UI keeps the whole log).
VERBOSE_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def run_on_cluster(dagster_instance, collection: str, tags: dict[str, str], *, verbose: bool = False):
    """Run the build job for one collection with the deployment's executor (its steps on the Dask
    cluster): this process orchestrates, the workers load the code location and run the steps."""
    import dagster as dg

    from insight_assets.app.in_process import process_tags
    from insight_assets.definitions import build_collection_job

    with (
        contextlib.redirect_stderr(progress.FailuresInBrief(sys.stderr)),
        dg.execute_job(
            dg.reconstructable(build_collection_job),
            dagster_instance,
            run_config=VERBOSE_RUN_CONFIG if verbose else QUIET_RUN_CONFIG,
            tags={"dagster/partition": collection, **process_tags(), **tags},
        ) as result,
    ):
        return result


def run_in_processes(
    dagster_instance,
    collection: str,
    tags: dict[str, str],
    asset_selection=None,
    *,
    verbose: bool = False,
):
    """Run the build job (or its ``asset_selection``) for one collection with its steps in processes
    of their own, as many at once as the ``llm`` pool allows model-calling steps
    (``app/llm_steps.py``): with a hosted model, steps that do not depend on each other wait for
    their answers side by side."""
    import dagster as dg

    from insight_assets.app import llm_steps
    from insight_assets.app.in_process import process_tags
    from insight_assets.definitions import build_collection_job

    run_config = VERBOSE_RUN_CONFIG if verbose else QUIET_RUN_CONFIG
    # As many processes as the pool lets model-calling steps run: within the run a step never waits
    # for a slot of the pool (with 2 processes for 1 slot, 5 steps once waited with the slot free). Each
    # step forks from a server that has imported the code location once (a spawned step would
    # import it again: about 2 s of CPU a step, most of a no-change rebuild).
    steps = {
        "multiprocess": {
            "max_concurrent": llm_steps.wanted_steps(),
            "start_method": {"forkserver": {"preload_modules": ["insight_assets.definitions"]}},
        }
    }
    with (
        contextlib.nullcontext() if verbose else progress.step_processes_quiet(),
        contextlib.redirect_stderr(progress.FailuresInBrief(sys.stderr)),
        dg.execute_job(
            dg.reconstructable(build_collection_job),
            dagster_instance,
            run_config={**run_config, "execution": {"config": steps}},
            tags={"dagster/partition": collection, **process_tags(), **tags},
            asset_selection=asset_selection,
        ) as result,
    ):
        return result


def run_job(
    job,
    dagster_instance,
    collection: str,
    asset_selection=None,
    tags: dict[str, str] | None = None,
    *,
    verbose: bool = False,
):
    """Run ``job`` (or its ``asset_selection``) for one collection in this process, recorded in
    the instance like any run; its console log (with ``verbose``) without stack traces; never raises
    for a failed step."""
    from insight_assets.app.in_process import process_tags

    with contextlib.redirect_stderr(progress.FailuresInBrief(sys.stderr)):
        return job.execute_in_process(
            instance=dagster_instance,
            partition_key=collection,
            asset_selection=asset_selection,
            raise_on_error=False,
            run_config=VERBOSE_RUN_CONFIG if verbose else QUIET_RUN_CONFIG,
            tags={**process_tags(), **(tags or {})},
        )
