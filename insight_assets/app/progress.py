"""Progress on screen: the live view of a build, of a dry run and of ``ask``.

``BuildView`` follows a run through the instance's event log from a thread beside it, so it works
the same for a run in this process and for steps on a cluster: on a terminal it draws a live view
with rich (steps done of total, the running step, the elapsed time, the step's latest progress,
which the step reports as ``progress:`` log messages, ``defs/progress.py``); elsewhere (CI, a pipe)
it prints plain lines.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TextIO

from insight_assets.defs.progress import PROGRESS_PREFIX

# Off a terminal, a running step's progress is printed at most this often.
PLAIN_PROGRESS_EVERY_S = 30.0
POLL_S = 0.5
# How a step's ``build`` metadata begins when it did no work: its last build reused, or an earlier
# build with the same inputs restored (``defs/reuse.py``).
REUSED = ("reused", "restored")


@dataclass
class _Step:
    key: str
    started: float
    progress: str = ""
    progress_printed: float = float("-inf")


class StepsView:
    """Steps done of total, the running ones and their latest progress, on screen while the block
    runs: drawn live with rich on a terminal (``live``), else one plain line per finished step and a
    running step's progress a line at most every ``PLAIN_PROGRESS_EVERY_S``. Feed it ``started``,
    ``progressed`` and ``finished``; they may be called from any one thread."""

    def __init__(self, label: str, total: int, *, stream: TextIO, live: bool, unit: str = "steps"):
        self.label = label
        self.total = total
        self.unit = unit
        self.stream = stream
        self.started_at = time.monotonic()
        self.finished_keys: list[str] = []
        self.running: dict[str, _Step] = {}
        self._live = None
        self._wants_live = live
        self._lock = threading.Lock()  # rich draws from a thread of its own

    def started(self, key: str) -> None:
        with self._lock:
            self.running[key] = _Step(key, time.monotonic())

    def progressed(self, key: str, progress: object) -> None:
        """``key``'s progress so far (a text, or what prints as one: ``CallProgress``)."""
        step = self.running.get(key)
        if step is None:
            return
        text = step.progress = str(progress)
        now = time.monotonic()
        if self._live is None and now - step.progress_printed >= PLAIN_PROGRESS_EVERY_S:
            step.progress_printed = now
            print(f"        {key}: {text}", file=self.stream, flush=True)

    def finished(self, key: str, outcome: str, *, failed: bool = False) -> None:
        with self._lock:
            step = self.running.pop(key, None)
            self.finished_keys.append(key)
        seconds = time.monotonic() - step.started if step else 0.0
        if self._live is not None:
            mark = (
                "[red]✗[/red]"
                if failed
                else ("[dim]·[/dim]" if outcome.startswith(REUSED) else "[green]✓[/green]")
            )
            self._live.console.print(f"  {mark} {key} [dim]{outcome}, {seconds:.1f} s[/dim]", highlight=False)
        else:
            done = f"[{len(self.finished_keys)}/{self.total}]"
            print(f"  {done} {key} {outcome} ({seconds:.1f} s)", file=self.stream, flush=True)

    def __rich__(self):
        """The live view as rich draws it, made anew at each refresh (so the clocks move)."""
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        with self._lock:
            done, running = len(self.finished_keys), list(self.running.values())
        now = time.monotonic()
        head = Table.grid(padding=(0, 1))
        head.add_row(
            Text(self.label, style="bold"),
            ProgressBar(total=self.total, completed=done, width=30),
            Text(f"{done}/{self.total} {self.unit}"),
            Text(_clock_text(now - self.started_at), style="dim"),
        )
        lines = [head]
        for step in running:
            running = Text("  ▸ ", style="cyan")
            running.append(step.key, style="bold")
            running.append(f"  {_clock_text(now - step.started)}", style="dim")
            if step.progress:
                running.append(f"  {step.progress}")
            lines.append(running)
        return Group(*lines)

    def __enter__(self):
        if self._wants_live:
            from rich.console import Console
            from rich.live import Live

            self._live = Live(self, console=Console(file=self.stream), refresh_per_second=4, transient=True)
            self._live.start()
        return self

    def __exit__(self, *exc_info) -> None:
        if self._live is not None:
            self._live.refresh()
            self._live.stop()
            self._live = None


# The tag that lets a view find its run: the run is created inside ``execute_in_process`` or
# ``execute_job``, which do not say its id before they return.
VIEW_TAG = "insight_assets/view"


class BuildView(StepsView):
    """A ``StepsView`` of the run tagged ``VIEW_TAG: view_id``, fed from the instance's event log by
    a thread beside the run: the same for a run in this process and for steps on a cluster.

    Use it around the run: ``with BuildView(instance, label, total, ...) as view:`` and give the run
    ``view.tags``.
    """

    def __init__(self, instance, label: str, total_steps: int, *, stream: TextIO, live: bool):
        super().__init__(label, total_steps, stream=stream, live=live)
        self.instance = instance
        self.view_id = uuid.uuid4().hex
        self.run_id: str | None = None
        self._cursor: str | None = None
        self._outcomes: dict[str, str] = {}  # step -> "built" / "reused" / "restored"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._follow, name="build-view", daemon=True)

    @property
    def tags(self) -> dict[str, str]:
        return {VIEW_TAG: self.view_id}

    def _read_events(self) -> None:
        import dagster as dg

        if self.run_id is None:
            found = self.instance.get_run_ids(filters=dg.RunsFilter(tags=self.tags), limit=1)
            if not found:
                return
            self.run_id = found[0]
        try:
            connection = self.instance.get_records_for_run(self.run_id, cursor=self._cursor)
        except Exception:  # noqa: BLE001 - a busy store: the next poll reads what this one missed
            return
        self._cursor = connection.cursor
        for record in connection.records:
            self._apply(record.event_log_entry)

    def _apply(self, entry) -> None:
        event = entry.dagster_event
        if event is None:
            message = entry.user_message or ""
            if message.startswith(PROGRESS_PREFIX):
                self.progressed(entry.step_key or "", message.removeprefix(PROGRESS_PREFIX))
            return
        kind, key = event.event_type_value, event.step_key
        if kind == "STEP_START":
            self.started(key)
        elif kind == "ASSET_MATERIALIZATION":
            build = event.event_specific_data.materialization.metadata.get("build")
            said = str(build.value) if build else ""
            self._outcomes[key] = next((outcome for outcome in REUSED if said.startswith(outcome)), "built")
        elif kind in ("STEP_SUCCESS", "STEP_FAILURE"):
            failed = kind == "STEP_FAILURE"
            self.finished(key, "failed" if failed else self._outcomes.get(key, "done"), failed=failed)

    def _follow(self) -> None:
        while not self._stop.wait(POLL_S):
            self._read_events()
        self._read_events()

    def __enter__(self):
        super().__enter__()
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join()
        super().__exit__(*exc_info)


def _live(stream, verbose: bool = False) -> bool:
    """A live view where a person watches a terminal; plain lines in CI, pipes and files."""
    return stream.isatty() and not verbose and os.environ.get("TERM") != "dumb"


def steps_view(label: str, total: int = 0, *, unit: str, stream):
    """The progress of a loop of this process (an estimate's steps, ``ask``'s methods) on
    ``stream`` (standard error: standard output holds the command's result): live on a terminal,
    plain lines elsewhere."""
    return StepsView(label, total, stream=stream, live=_live(stream), unit=unit)


def build_view(dagster_instance, label: str, steps: int, verbose: bool):
    """The progress of a run on screen: live on a terminal (unless ``verbose``: then Dagster's own
    log lines are shown, with plain progress lines between them), plain lines elsewhere."""
    return BuildView(dagster_instance, label, steps, stream=sys.stdout, live=_live(sys.stdout, verbose))


# Console-log records left out of the terminal: stack traces, and the steps skipped because an
# earlier one failed. The failed step's own message is printed after the run instead.
_UNSHOWN_RECORDS = ("Stack Trace:", ". Not executing.")


class FailuresInBrief(io.TextIOBase):
    """Standard error for a run's console log, without stack traces and skipped-step notices.

    Dagster logs a failed step with its stack trace, then one error per step it skips. Here the
    failed step's message, printed after the run, says what went wrong and what to do; the full log
    (traces included) stays in the run's log in the UI. The console logger writes each record in one
    call, so a record is kept or dropped whole.
    """

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        if not any(marker in text for marker in _UNSHOWN_RECORDS):
            self.stream.write(text)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


@contextlib.contextmanager
def step_processes_quiet() -> Iterator[None]:
    """Drop the debug lines that step processes print on the inherited standard error.

    Each of Dagster's multiprocess step workers logs "Executing step ... in subprocess" through a log
    manager of its own, at DEBUG, whatever the run's logger config says. The workers write to file
    descriptor 2, not to ``sys.stderr``: while a run lasts that descriptor is a pipe whose lines are
    passed on to the real one, but for those and the records ``FailuresInBrief`` leaves out. The
    pipe and its relay stay for the life of the process: the fork server the workers start from
    keeps the descriptor it was started with."""
    write_end = _stderr_relay()
    saved = os.dup(2)
    os.dup2(write_end, 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


@functools.cache
def _stderr_relay() -> int:
    """The write end of the pipe whose lines a daemon thread passes on to this process's standard
    error as it was first found, leaving out Dagster's debug records."""
    destination = os.dup(2)
    reading, writing = os.pipe()

    def relay() -> None:
        with os.fdopen(reading, "rb") as lines:
            for line in lines:
                text = line.decode("utf-8", "replace")
                if " - DEBUG - " not in text and not any(marker in text for marker in _UNSHOWN_RECORDS):
                    os.write(destination, line)

    threading.Thread(target=relay, name="step-stderr", daemon=True).start()
    return writing


def _clock_text(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes}:{seconds:02d}"
