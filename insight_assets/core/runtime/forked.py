"""A list of items processed on every core by forked worker processes: parsing a collection's PDFs.

Parsing holds Python's lock (PyMuPDF runs MuPDF under it), so threads would only take turns. A forked
process starts in milliseconds with the parser already loaded, and sends its results back through a
pipe. MuPDF is C: a file that crashes it takes down only its worker, the file's result says so, and
a fresh worker takes the rest. So even one worker is a forked process.

Only Linux forks here. macOS's system libraries are not safe to use in a forked child and Windows
cannot fork; there, and wherever a fork fails, the items are processed in this process one by one.
"""

from __future__ import annotations

import collections
import contextlib
import faulthandler
import gc
import os
import pickle
import signal
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multiprocessing.connection import Connection


def can_fork() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "fork")


@dataclass
class _Worker:
    pid: int
    connection: Connection
    index: int = -1  # the item it is processing

    def give(self, index: int) -> None:
        self.index = index
        self.connection.send(index)

    def reap(self) -> str:
        """Wait for the process to end; how it ended, in words."""
        self.connection.close()
        _, status = os.waitpid(self.pid, 0)
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            with contextlib.suppress(ValueError):
                return f"killed by {signal.Signals(number).name}"
            return f"killed by signal {number}"
        return f"exited with status {os.WEXITSTATUS(status)}"


def forked_map(
    function: Callable[[Any], Any],
    items: Sequence[Any],
    *,
    workers: int,
    crashed: Callable[[Any, str], Any],
    on_done: Callable[[], None] = lambda: None,
) -> list[Any]:
    """``[function(item) for item in items]``, on up to ``workers`` forked processes (one at least,
    so that a crash never takes this process down).

    Results come back in the items' order. A worker that dies while processing an item (a signal from
    a crash in C, the kernel's out-of-memory killer) makes ``crashed(item, how_it_died)`` that item's
    result. An exception ``function`` raises is raised here, and the other workers are stopped.
    ``on_done()`` is called here as each item finishes (for progress).
    """
    from multiprocessing.connection import wait  # loaded when a collection is parsed

    results: list[Any] = [None] * len(items)
    waiting = collections.deque(range(len(items)))
    busy: dict[Connection, _Worker] = {}
    try:
        for _ in range(max(1, min(workers, len(items))) if can_fork() else 0):
            _start_with_next(function, items, waiting, busy)
        while busy or waiting:
            if not busy:  # no worker (not Linux, or the system refused a fork): the rest are done here
                index = waiting.popleft()
                results[index] = function(items[index])
                on_done()
                continue
            for connection in wait(list(busy)):
                worker = busy.pop(connection)
                try:
                    index, ok, value = pickle.loads(connection.recv_bytes())
                except (EOFError, OSError):
                    results[worker.index] = crashed(items[worker.index], worker.reap())
                    on_done()
                    _start_with_next(function, items, waiting, busy)
                    continue
                if not ok:
                    connection.send(None)
                    worker.reap()
                    raise value
                results[index] = value
                on_done()
                if waiting:
                    worker.give(waiting.popleft())
                    busy[connection] = worker
                else:
                    connection.send(None)
                    worker.reap()
    finally:
        for worker in busy.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker.pid, signal.SIGKILL)
            worker.reap()
    return results


def _start_with_next(function, items, waiting: collections.deque, busy: dict) -> None:
    """Fork a worker for the next waiting item, if there is one and the system lets us."""
    from multiprocessing.connection import Pipe

    if not waiting:
        return
    ours, theirs = Pipe()
    try:
        with warnings.catch_warnings():
            # LanceDB, when loaded, warns that its runtime is reset in the child, which never uses it.
            warnings.filterwarnings("ignore", message="lancedb fork support", category=RuntimeWarning)
            pid = os.fork()
    except OSError:  # out of processes or memory: the workers already running go on
        ours.close()
        theirs.close()
        return
    if pid == 0:  # the worker: it never returns into the caller's code
        code = 1
        try:
            ours.close()
            _serve(function, items, theirs)
            code = 0
        finally:
            os._exit(code)  # no atexit hooks, no flushing of the parent's buffers a second time
    theirs.close()
    worker = _Worker(pid, ours)
    worker.give(waiting.popleft())
    busy[ours] = worker


def _serve(function, items, connection: Connection) -> None:
    """A worker's loop: process the item whose index arrives, send back ``(index, ok, result or
    exception)``, until ``None`` arrives or the parent is gone."""
    # Ctrl-C reaches the whole process group: the parent handles it and stops its workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A crash is the parent's to report, once, in the item's result: no dump of this process's stack.
    faulthandler.disable()
    # Another of the parent's threads may have held the lock of its stdout or stderr at the fork, for
    # good in this copy: what the worker prints (a library's warning) goes through objects of its own.
    for name, descriptor in (("stdout", 1), ("stderr", 2)):
        with contextlib.suppress(OSError):  # no such descriptor: the parent's object stays
            stream = open(  # noqa: SIM115 - open for the rest of the worker's life
                os.dup(descriptor), "w", buffering=1, encoding="utf-8", errors="replace"
            )
            setattr(sys, name, stream)
    # The heap inherited from the parent stays out of this process's collections, so that they do
    # not touch (and copy) every page of it.
    gc.freeze()
    while True:
        try:
            index = connection.recv()
        except EOFError:
            return
        if index is None:
            return
        try:
            payload = pickle.dumps((index, True, function(items[index])))
        except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
            payload = _exception_payload(index, exc)
        connection.send_bytes(payload)


def _exception_payload(index: int, exc: Exception) -> bytes:
    try:
        return pickle.dumps((index, False, exc))
    except Exception:  # noqa: BLE001 - an exception that cannot travel is described instead
        return pickle.dumps((index, False, RuntimeError(f"{type(exc).__name__}: {exc}")))
