"""Runs that ``insight-assets build`` executes in its own process, and what is left when one is killed.

Such a run claims the pools' slots (``app/instance.py``) like any other. When its process dies
without ending it (SIGKILL, the terminal closed, out of memory), Dagster never learns that it ended:
the run stays "in progress" and its slots stay claimed, so every later step of the same pool would
wait forever. Each run is therefore tagged with its host and process id, and a build first ends the
runs whose process is gone.
"""

from __future__ import annotations

import os
import socket

import dagster as dg

PROCESS_TAG = "insight_assets/process"
_IN_PROGRESS = [dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED]


def process_tags() -> dict[str, str]:
    """The tag that names this process as the one running a run."""
    return {PROCESS_TAG: f"{socket.gethostname()}:{os.getpid()}"}


def _process_is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def end_abandoned_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark failed the in-process runs of this host whose process is gone, and free their pool
    slots; the ids of the runs ended."""
    host = socket.gethostname()
    ended = []
    for record in instance.get_run_records(dg.RunsFilter(statuses=_IN_PROGRESS)):
        run = record.dagster_run
        owner = run.tags.get(PROCESS_TAG, "")
        owner_host, _, pid = owner.rpartition(":")
        if owner_host != host or not pid.isdigit() or _process_is_alive(int(pid)):
            continue
        instance.report_run_failed(run, f"The process that ran it (pid {pid}) ended without finishing it.")
        instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
        ended.append(run.run_id)
    return ended
