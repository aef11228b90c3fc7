"""A process that can be stopped, and whose children can be: SIGINT and SIGTERM not left ignored.

A command started in the background from a script inherits an ignored SIGINT (``nohup`` or a
supervisor may also leave SIGTERM ignored), and an ignored signal stays ignored in every process it
starts. Dagster maps SIGTERM to SIGINT's handler whenever it runs a job in a process, so after the
first run in process, SIGTERM is ignored there too, and in everything started after it: Dagster's own
compute-log ``tail`` and its watcher then outlive their ``terminate()`` by 30 seconds each, a minute
lost per step of a job whose steps run in other processes (measured: a two-collection Dask build
went from 2 to 15 minutes), and the command cannot be stopped.
"""

from __future__ import annotations

import signal
import threading


def restore_default_interrupts() -> None:
    """Give SIGINT and SIGTERM their default behaviour where this process inherited them ignored
    (handlers can only be set from the main thread; elsewhere this does nothing)."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
