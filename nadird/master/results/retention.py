"""The jobs' history retention (`history:` of a job, job/history.py),
applied by the master in the background.

Every `master.history_trim_interval` seconds a round walks the history of
each job that has a retention, a step at a time (store/retention.py: at
most a few hundred versions deleted per step, one short store job), with a
pause between steps so the store writer's batches go first. The cut-off
time of `keep_for` is taken from the wall clock once per job and round.
What it deleted is counted in the master's stats (`history_trimmed`,
`/metrics` nadird_history_trimmed). A store without history (or one that
cannot trim it) leaves the loop idle.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable

from nadird.common.logs import get_logger
from nadird.config import Config
from nadird.job.spec import Job
from nadird.store.retention import TRIM_ROWS, Keep, TrimsHistory

log = get_logger()
STEP_PAUSE = 0.05  # seconds between two steps of a round
TRIMMED = "history_trimmed"  # the stats key


def keep_of(job: Job, now: float) -> Keep | None:
    """What the job keeps as of `now`; None: all of it."""
    history = job.history
    if history is None or not history.trims:
        return None
    age = history.max_age()
    return Keep(job.name, None if age is None else now - age, history.keep_versions)


class HistoryRetention:
    def __init__(
        self,
        store: object,
        config: Callable[[], Config],
        stats: Counter[str],
        wall: Callable[[], float] = time.time,
        pause: float = STEP_PAUSE,
        limit: int = TRIM_ROWS,
    ) -> None:
        self._store = store if isinstance(store, TrimsHistory) else None
        self._config = config
        self._stats = stats
        self._wall = wall
        self._pause = pause
        self._limit = limit

    async def loop(self) -> None:
        """Rounds until the master stops (the first one interval after start:
        a restarting master has other work first)."""
        while True:
            await asyncio.sleep(self._config().master.history_trim_interval)
            await self.round()

    async def round(self) -> int:
        """One pass over every job's history; how many versions it deleted."""
        if self._store is None:
            return 0
        total = 0
        for job in list(self._config().jobs.values()):
            keep = keep_of(job, self._wall())
            if keep is not None:
                total += await self._trim(self._store, keep)
        if total:
            log.info("history_trimmed", versions=total)
        return total

    async def _trim(self, store: TrimsHistory, keep: Keep) -> int:
        total, after = 0, None
        while True:
            step = await store.trim_history(keep, after, self._limit)
            total += step.trimmed
            self._stats[TRIMMED] += step.trimmed
            if step.after is None:
                return total
            after = step.after
            await asyncio.sleep(self._pause)
