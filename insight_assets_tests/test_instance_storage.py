"""The instance's event log with its files kept open (``app/instance_storage.py``): what Dagster's
own SQLite event log guaranteed by reopening its files for every use still holds. The UI, watching a
run's file, sees each event as it is written; a wiped instance writes to new files, not deleted ones;
a process holds only a few run files open, and none once the instance is closed."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.events.log import EventLogEntry

from insight_assets.app.instance import ensure_instance_config
from insight_assets.app.instance_storage import KEPT_RUN_FILES, KeptOpenInstance


@pytest.fixture
def home(tmp_path) -> Path:
    ensure_instance_config(tmp_path, environ={})
    return tmp_path


def note(run_id: str, text: str) -> EventLogEntry:
    """A log line of run ``run_id``, as a step's ``context.log`` writes one."""
    return EventLogEntry(
        error_info=None, level=logging.INFO, user_message=text, run_id=run_id, timestamp=time.time()
    )


def messages(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    return [entry.user_message for entry in instance.all_logs(run_id)]


def open_run_files(home: Path) -> set[str]:
    """The event log files (not their WAL) that this process holds open."""
    folder = str(home / "history" / "runs")
    found = set()
    for descriptor in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{descriptor}")
        except OSError:  # closed since it was listed
            continue
        if target.startswith(folder) and target.endswith(".db"):
            found.add(Path(target).name)
    return found


def test_the_ui_watching_a_run_sees_each_event_as_it_is_written(home):
    with (
        dg.DagsterInstance.from_config(str(home)) as writer,
        dg.DagsterInstance.from_config(str(home)) as ui,
    ):
        assert isinstance(writer, KeptOpenInstance)
        writer.handle_new_event(note("run-1", "step started"))
        seen: list[str] = []
        arrived = threading.Event()

        def on_event(entry, cursor) -> None:
            seen.append(entry.user_message)
            arrived.set()

        ui.event_log_storage.watch("run-1", None, on_event)
        writer.handle_new_event(note("run-1", "step succeeded"))
        # The watch reacts to the file changing: without it, nothing comes until the writer closes.
        assert arrived.wait(timeout=60), (
            "the watching instance saw no event while the writer kept its file open"
        )
        assert "step succeeded" in seen
        ui.event_log_storage.end_watch("run-1", on_event)


def test_a_wiped_instance_writes_its_next_events_to_new_files(home):
    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.handle_new_event(note("run-1", "before the wipe"))
        instance.wipe()
        instance.handle_new_event(note("run-1", "after the wipe"))
    # Read afresh: an event written to the deleted file would be lost with it.
    with dg.DagsterInstance.from_config(str(home)) as reader:
        assert messages(reader, "run-1") == ["after the wipe"]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="lists open files through Linux's /proc")
def test_a_process_keeps_a_few_run_files_open_and_none_once_the_instance_is_closed(home):
    runs = [f"run-{number}" for number in range(KEPT_RUN_FILES + 5)]
    with dg.DagsterInstance.from_config(str(home)) as instance:
        for run_id in runs:
            instance.handle_new_event(note(run_id, f"{run_id} started"))
        assert open_run_files(home) - {"index.db"} == {f"{run_id}.db" for run_id in runs[-KEPT_RUN_FILES:]}
        # A run file closed to make room opens again when it is next used.
        assert messages(instance, runs[0]) == [f"{runs[0]} started"]
    assert open_run_files(home) == set()
    assert not list((home / "history" / "runs").glob("*.db-wal"))  # each WAL folded into its file
