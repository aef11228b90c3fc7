"""What a step says about its progress, and how a view shows a run's steps off a terminal."""

from __future__ import annotations

import io

from insight_assets.app.progress import StepsView
from insight_assets.defs.progress import PROGRESS_PREFIX, StepProgress, eta_text


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_step_reports_at_most_every_few_seconds_and_always_its_last_count():
    clock, said = Clock(), []
    progress = StepProgress(said.append, clock=clock)

    for done in range(1, 11):
        clock.now += 0.5
        progress.count(done, 10, "papers parsed")

    # The first report, one 2 s later, and the last one; with the time left at the pace so far once
    # a few are done.
    assert said == [
        PROGRESS_PREFIX + "1 of 10 papers parsed",
        PROGRESS_PREFIX + "5 of 10 papers parsed, about 2 s left",
        PROGRESS_PREFIX + "9 of 10 papers parsed",
        PROGRESS_PREFIX + "10 of 10 papers parsed",
    ]


def test_the_time_left_is_said_in_minutes_once_it_is_long():
    assert eta_text(3, 10, 60.0) == "about 2 min left" and eta_text(3, 10, 30.0) == "about 70 s left"
    assert eta_text(2, 10, 5.0) == "" and eta_text(10, 10, 5.0) == ""


def test_off_a_terminal_each_finished_step_is_one_plain_line():
    stream = io.StringIO()
    with StepsView("demo", 2, stream=stream, live=False) as view:
        view.started("chunks")
        view.progressed("chunks", "3 of 9 papers parsed")  # the first progress of a step is shown
        view.progressed("chunks", "4 of 9 papers parsed")  # the next only 30 s later
        view.finished("chunks", "built")
        view.started("insights")
        view.finished("insights", "failed", failed=True)

    lines = stream.getvalue().splitlines()
    assert lines[0] == "        chunks: 3 of 9 papers parsed"
    assert lines[1].startswith("  [1/2] chunks built (") and lines[2].startswith("  [2/2] insights failed (")
    assert len(lines) == 3 and "\x1b[" not in stream.getvalue()
