"""The master's loops, run so that no single message or tick can stop them.

A loop that raises (a handler bug a hostile frame found, a failing write) has
lost one message or one tick: the exception is counted in `handler_errors`,
logged at most once a second per loop with the number of failures not
logged, and the loop is started again. A loop that ends anyway (it returned,
the guard itself failed, or the task was cancelled by something other than
the master stopping) makes the master unhealthy: /healthz answers 503,
/metrics reports nadird_loops_healthy 0, and the process stops with a non-zero exit
status so that systemd restarts it.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable

from nadird.common.errors import NadirdError
from nadird.common.logs import PerKeyLimit, get_logger

log = get_logger()
LOG_EVERY = 1.0  # seconds between two logged failures of one loop
# Seconds before a failed loop starts again: at most ~1,000 failures a second
# from a flood of messages that each hit a bug, never a spinning core.
RESTART_PAUSE = 0.001
# Seconds before a loop still running after its cancellation is cancelled again.
RECANCEL_AFTER = 0.1


class LoopFailed(NadirdError):
    """A master loop ended while the master was running."""


class LoopGuard:
    def __init__(self, stats: Counter[str], on_broken: Callable[[], None] | None = None) -> None:
        self.stats = stats
        self.failure: str | None = None  # why the master is no longer healthy
        self.broken = asyncio.Event()
        self._on_broken = on_broken
        self.stopping = False
        self._tasks: list[asyncio.Task[None]] = []
        self._log_limit = PerKeyLimit(LOG_EVERY)

    @property
    def healthy(self) -> bool:
        return self.failure is None

    def start(
        self, name: str, loop: Callable[[], Awaitable[None]], pause: float = RESTART_PAUSE
    ) -> None:
        """Run `loop` in a task until the master stops, again each time it
        raises; `pause` is how long to wait before (so that a loop failing at
        once cannot spin a core)."""
        task = asyncio.create_task(self._run(name, loop, pause), name=name)
        task.add_done_callback(self._ended)
        self._tasks.append(task)

    async def stop(self) -> None:
        """Cancel every loop and wait for them; raise LoopFailed after that if
        one had ended on its own (the caller finishes its own stop first)."""
        self.stopping = True
        running = set(self._tasks)
        while running:
            # Again while one runs: a wait that swallowed its cancellation
            # (asyncio.wait_for on Python 3.11, see waits.py) would otherwise
            # keep the master from stopping for ever.
            for task in running:
                task.cancel()
            _, running = await asyncio.wait(running, timeout=RECANCEL_AFTER)

    def raise_if_failed(self) -> None:
        if self.failure is not None:
            raise LoopFailed(self.failure)

    async def _run(self, name: str, loop: Callable[[], Awaitable[None]], pause: float) -> None:
        while True:
            try:
                await loop()
            except Exception as exc:  # CancelledError is not an Exception: it ends the task
                self._failed(name, exc)
                del exc  # its traceback holds the loop's frames, and the message
                await asyncio.sleep(pause)
            else:
                return  # a loop never returns: _ended reports it

    def _failed(self, name: str, exc: Exception) -> None:
        self.stats["handler_errors"] += 1
        suppressed = self._log_limit.allow(name, time.monotonic())
        if suppressed is None:
            return
        log.error("master_loop_failed", loop=name, suppressed=suppressed, exc_info=exc)

    def _ended(self, task: asyncio.Task[None]) -> None:
        if self.stopping:
            return
        if task.cancelled():
            reason = "cancelled"
        else:
            error = task.exception()
            reason = f"{type(error).__name__}: {error}"[:300] if error else "returned"
        self.failure = f"{task.get_name()} loop ended: {reason}"
        log.error("master_loop_died", loop=task.get_name(), reason=reason)
        self.broken.set()
        if self._on_broken is not None:
            self._on_broken()
