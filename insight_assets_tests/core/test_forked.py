"""``core.runtime.forked.forked_map``: results in order from forked workers, a crash confined to its item,
and an exception raised in the caller."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from insight_assets.core.runtime.forked import can_fork, forked_map

needs_fork = pytest.mark.skipif(not can_fork(), reason="forked workers run on Linux only")


def square_with_pid(number: int) -> tuple[int, int]:
    return number * number, os.getpid()


def crash_on_three(number: int) -> int:
    if number == 3:
        os.kill(os.getpid(), signal.SIGSEGV)
    return number


def fail_on_two(number: int) -> int:
    if number == 2:
        raise ValueError("two is refused")
    return number


def crashed(item, how: str) -> str:
    return f"item {item}: {how}"


def children() -> set[int]:
    """This process's child processes, zombies (ended, not waited for) included, read from /proc."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended meanwhile
            continue
        if int(fields[1]) == os.getpid():
            found.add(int(stat.parent.name))
    return found


@needs_fork
def test_results_keep_the_items_order_and_come_from_other_processes():
    done = []
    results = forked_map(
        square_with_pid, list(range(12)), workers=2, crashed=crashed, on_done=lambda: done.append(1)
    )
    assert [square for square, _ in results] == [number * number for number in range(12)]
    pids = {pid for _, pid in results}
    assert os.getpid() not in pids
    assert len(pids) == 2
    assert len(done) == 12


@needs_fork
def test_a_crash_becomes_that_items_result_and_the_rest_go_on():
    results = forked_map(crash_on_three, [1, 2, 3, 4, 5, 6], workers=2, crashed=crashed)
    assert results == [1, 2, "item 3: killed by SIGSEGV", 4, 5, 6]


@needs_fork
def test_a_crash_of_the_only_worker_is_followed_by_a_fresh_one():
    results = forked_map(crash_on_three, [3, 3, 1], workers=2, crashed=crashed)
    assert results == ["item 3: killed by SIGSEGV", "item 3: killed by SIGSEGV", 1]


@needs_fork
def test_an_exception_is_raised_in_the_caller_and_no_worker_is_left():
    before = children()
    with pytest.raises(ValueError, match="two is refused"):
        forked_map(fail_on_two, [1, 2, 3, 4], workers=2, crashed=crashed)
    assert children() == before  # every worker ended and was waited for


@needs_fork
def test_one_worker_takes_the_items_one_after_another_outside_this_process():
    results = forked_map(square_with_pid, [1, 2, 3], workers=1, crashed=crashed)
    assert [square for square, _ in results] == [1, 4, 9]
    assert len({pid for _, pid in results}) == 1
    assert results[0][1] != os.getpid()
    assert forked_map(square_with_pid, [], workers=4, crashed=crashed) == []


@needs_fork
def test_workers_forked_beside_lancedb_print_no_warning():
    script = (
        "import lancedb\n"
        "from insight_assets.core.runtime.forked import forked_map\n"
        "print(forked_map(abs, [-1, -2], workers=2, crashed=None))\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "always", "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[1, 2]"
    assert done.stderr == ""
