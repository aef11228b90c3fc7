"""Where a run's steps execute: in this machine's processes (Dagster's default executor), or, when
INSIGHT_ASSETS_DASK_SCHEDULER names a scheduler, on that Dask cluster's workers through
dagster-dask's executor. Its worker processes load the code location themselves and reach the same
Dagster instance and stores, so they need the project installed and the same INSIGHT_ASSETS_*
variables (and DAGSTER_HOME) as the process that starts the run.
"""

from __future__ import annotations

import dagster as dg

from insight_assets.core.deployment import DASK_SCHEDULER_ENV, Deployment, DeploymentError, check_dask_scheduler
from insight_assets.defs.pools import POOLS


@dg.executor(
    name="dask",
    config_schema={"address": dg.Field(dg.StringSource, description="The Dask scheduler, tcp://host:8786.")},
    requirements=dg.multiple_process_executor_requirements(),
)
def dask_cluster_executor(init_context: dg.InitExecutorContext):
    """dagster-dask's executor on an existing cluster, once its scheduler has answered and its
    workers can run the steps (one thread each, the pools offered as resources): a wrong address is
    one sentence before any step, not a run that waits forever."""
    from dagster_dask.executor import DaskExecutor

    address = init_context.executor_config["address"]
    try:
        check_dask_scheduler(address, DASK_SCHEDULER_ENV, worker_resources=POOLS)
    except DeploymentError as error:
        raise dg.DagsterInvalidConfigError(str(error), [], address) from None
    return DaskExecutor("existing", {"address": address})


def deployment_executor(deployment: Deployment | None = None) -> dg.ExecutorDefinition | None:
    """The executor the deployment selects: Dask's when a scheduler is named (its address read
    from the variable when a run starts), else ``None``: Dagster's default."""
    deployment = deployment or Deployment.from_environment()
    if not deployment.dask_scheduler:
        return None
    return dask_cluster_executor.configured({"address": {"env": DASK_SCHEDULER_ENV}})


def build_collection_job() -> dg.JobDefinition:
    """The build job as the code location defines it: what ``dg.reconstructable`` points the Dask
    workers at, so that each loads it itself."""
    from insight_assets.definitions import defs

    return defs.resolve_job_def("build_collection")
