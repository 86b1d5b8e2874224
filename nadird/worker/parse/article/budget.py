"""A page's CPU budget, enforced while the extraction runs.

In the main thread of a process (a worker runs its pages there, and so does
each process of `nadird reextract --jobs N`) a profiling timer interrupts
the extraction once the process has spent the budget's CPU time on it: its
signal handler raises OverBudget between two Python instructions of
whatever is running, the engine included. A step that cannot be stopped
in-process otherwise (a pathological page making the engine run for
minutes) would stall the worker's event loop, its heartbeats with it.

Python runs signal handlers in the main thread only, so elsewhere (the
thread `nadird reextract` parses in with one process) the budget is checked
between the steps instead (`check`), and a page may take one step more.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import TypeVar

T = TypeVar("T")


class OverBudget(BaseException):
    """The page's budget is spent. A BaseException, so that the engine's own
    `except Exception` handlers let it through."""


class Deadline:
    """The budget of one page, in CPU time of the thread running it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.thread_time() + seconds

    def check(self) -> None:
        """Raise OverBudget when the budget is spent (between steps)."""
        if time.thread_time() > self._end:
            raise OverBudget


def _can_interrupt() -> bool:
    return threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")


def run_within(deadline: Deadline, step: Callable[[], T]) -> T:
    """`step()`, interrupted by OverBudget when it outlives the deadline."""
    if not _can_interrupt():
        return step()
    armed = True

    def on_timer(signum: int, frame: FrameType | None) -> None:
        if armed:
            raise OverBudget

    previous = signal.signal(signal.SIGPROF, on_timer)
    try:
        signal.setitimer(signal.ITIMER_PROF, deadline.seconds)
        result = step()
        # Disarmed inside the try: a signal before this line is an OverBudget
        # the caller catches, one after it does nothing.
        armed = False
        return result
    finally:
        armed = False
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
