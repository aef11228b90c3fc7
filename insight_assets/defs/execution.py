"""Where a run's steps execute: in this machine's processes (Dagster's default executor), or, when
INSIGHT_ASSETS_DASK_SCHEDULER names a scheduler, on that Dask cluster's workers through
dagster-dask's executor. Its worker processes load the code location themselves and reach the same
Dagster instance and stores, so they need the project installed and the same INSIGHT_ASSETS_*
variables (and DAGSTER_HOME) as the process that starts the run.

dagster-dask 0.29.27 is used with three mends (``ClusterExecutor.execute``), each found by the scale
tests: a step's Dask key names its run, so that two runs of one job (two collections at once) are
not taken for one and the second left unrun (dagster#21418); a step's Dagster objects travel inside
the submitted function, since recent Dask walks a task's arguments and Dagster's records refuse to
be iterated; and a step whose upstream step did not succeed is not run (dagster-dask would run it,
on whatever an earlier build left).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence

import dagster as dg
from dagster_shared.serdes import deserialize_value, serialize_value

from insight_assets.core.deployment import (
    DASK_SCHEDULER_ENV,
    Deployment,
    DeploymentError,
    check_dask_scheduler,
)
from insight_assets.defs.pools import POOLS


def _step_on_worker(upstream: Sequence[str], step_key: str, **step) -> str:
    """On a Dask worker: run the step once every upstream step has succeeded, else nothing; its
    events, serialized (``upstream``: each upstream step's). ``step`` are the other arguments of
    dagster-dask's ``query_on_dask_worker``. Events travel as text: Dask cannot size Dagster's
    records (dagster#33771) and would log a warning for each step."""
    from dagster_dask.executor import query_on_dask_worker

    for events in upstream:
        if not any(event.is_step_success for event in deserialize_value(events, list)):
            return serialize_value([])
    return serialize_value(list(query_on_dask_worker(upstream, step_keys=[step_key], **step)))


def _cluster_executor_class():
    """``ClusterExecutor``, made when first needed: importing dagster-dask loads Dask."""
    from dagster._core.errors import raise_execution_interrupts
    from dagster._core.events import DagsterEvent, EngineEventData
    from dagster._utils import iterate_with_context
    from dagster_dask.executor import DaskExecutor, get_dask_resource_requirements
    from distributed import Client, as_completed

    class ClusterExecutor(DaskExecutor):
        """dagster-dask's executor on an existing cluster, mended (see the module's docstring)."""

        def execute(self, plan_context, execution_plan) -> Iterator[DagsterEvent]:
            if not plan_context.instance.is_persistent:
                raise dg.DagsterInvariantViolationError(
                    "Steps on a Dask cluster need a persistent Dagster instance."
                )
            run_id = plan_context.dagster_run.run_id
            futures = {}
            with Client(self.cluster_configuration["address"]) as client:
                for level in execution_plan.get_steps_to_execute_by_level():
                    for step in level:
                        upstream = [
                            futures[key]
                            for step_input in step.step_inputs
                            for key in step_input.dependency_keys
                        ]
                        work = functools.partial(
                            _step_on_worker,
                            step_key=step.key,
                            recon_job=plan_context.reconstructable_job,
                            dagster_run=plan_context.dagster_run,
                            run_config=plan_context.run_config,
                            instance_ref=plan_context.instance.get_ref(),
                            known_state=execution_plan.known_state,
                        )
                        futures[step.key] = client.submit(
                            work,
                            upstream,
                            key=f"{plan_context.job_name}.{step.key}.{run_id}",
                            resources=get_dask_resource_requirements(step.tags),
                            pure=False,
                        )
                step_of = {future.key: step_key for step_key, future in futures.items()}
                done = as_completed(list(futures.values()), with_results=True)
                for future, serialized in iterate_with_context(raise_execution_interrupts, done):
                    events = deserialize_value(serialized, list)
                    if not events:
                        yield DagsterEvent.engine_event(
                            plan_context,
                            f"{step_of[future.key]} was not run: a step it depends on did not succeed.",
                            EngineEventData(),
                        )
                    yield from events

    return ClusterExecutor


@dg.executor(
    name="dask",
    config_schema={"address": dg.Field(dg.StringSource, description="The Dask scheduler, tcp://host:8786.")},
    requirements=dg.multiple_process_executor_requirements(),
)
def dask_cluster_executor(init_context: dg.InitExecutorContext):
    """dagster-dask's executor on an existing cluster, once its scheduler has answered and its
    workers can run the steps (one thread each, the pools offered as resources): a wrong address is
    one sentence before any step, not a run that waits forever."""
    address = init_context.executor_config["address"]
    try:
        check_dask_scheduler(address, DASK_SCHEDULER_ENV, worker_resources=POOLS)
    except DeploymentError as error:
        raise dg.DagsterInvalidConfigError(str(error), [], address) from None
    return _cluster_executor_class()("existing", {"address": address})


def deployment_executor() -> dg.ExecutorDefinition | None:
    """The executor the deployment selects: Dask's when a scheduler is named (its address read
    from the variable when a run starts), else ``None``: Dagster's default."""
    if not Deployment.from_environment().dask_scheduler:
        return None
    return dask_cluster_executor.configured({"address": {"env": DASK_SCHEDULER_ENV}})
