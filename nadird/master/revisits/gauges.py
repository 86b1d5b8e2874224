"""The revisit scheduler's gauges for the status line: how many URLs are due
and overdue, checks per second, how late revisits ran.

Apart from scheduler.py because each keeps its own small state (a cached
count, a window of samples, recent lateness) that has nothing to do with
when a URL is due, only with reporting it.
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
from collections import deque
from collections.abc import Callable

from nadird.master.observe.metrics import PageHistogram
from nadird.master.state.revisit_db import RevisitTable

Clock = Callable[[], float]
OVERDUE_AFTER = 60.0  # a URL due longer than this is overdue
RATE_WINDOW = 60.0  # seconds over which checks per second are measured
# Counting what is due walks an index entry per due URL: 50 ms with a
# million due, and alerts read the status every tick. A count is reused
# until this many times its own cost has passed (at most 1/21 of the time).
COUNT_SHARE = 20.0
LATENESS_KEPT = 1000  # recent revisits the status's lateness quantiles are taken from
LATENESS_BUCKETS = (1, 5, 15, 60, 300, 900, 3600, 14400, 86400)


class DueCount:
    """(due, overdue) URLs, counted again only when the last count's cost allows."""

    def __init__(self, table: RevisitTable, wall: Clock, clock: Clock) -> None:
        self.table, self._wall, self._clock = table, wall, clock
        self._due = (0, 0)  # (due, overdue) when last counted
        self._counted = (-math.inf, 0.0)  # (when, seconds it took) on self._clock

    def counts(self) -> tuple[int, int]:
        now = self._wall()  # read first: the guard reads the monotonic clock too
        started = self._clock()
        when, cost = self._counted
        if started - when < COUNT_SHARE * cost:
            return self._due
        # Closed: the last status line of a stopped master keeps the last counts.
        with contextlib.suppress(sqlite3.ProgrammingError):
            self._due = (self.table.count_due(now), self.table.count_due(now - OVERDUE_AFTER))
        self._counted = (started, self._clock() - started)
        return self._due


class CheckRate:
    """Checks per second over the last RATE_WINDOW seconds (of status reads)."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._samples: deque[tuple[float, int]] = deque()

    def per_second(self, checks: int) -> float:
        now = self._clock()
        self._samples.append((now, checks))
        while len(self._samples) > 1 and now - self._samples[0][0] > RATE_WINDOW:
            self._samples.popleft()
        then, before = self._samples[0]
        return (checks - before) / (now - then) if now > then else 0.0


class Lateness:
    """How late revisits ran: the metric's histogram and recent quantiles."""

    def __init__(self) -> None:
        self.histogram = PageHistogram(
            "nadird_revisit_lateness_seconds",
            "How late revisits ran: fetch time minus due time (wall clock)",
            buckets=LATENESS_BUCKETS,
        )
        self._recent: deque[float] = deque(maxlen=LATENESS_KEPT)

    def observe(self, late: float) -> None:
        self.histogram.observe(late)
        self._recent.append(late)

    def summary(self) -> dict[str, float]:
        """p50 and p95 of how late the last LATENESS_KEPT revisits ran, seconds."""
        recent = sorted(self._recent)
        if not recent:
            return {"revisit_lateness_p50": 0.0, "revisit_lateness_p95": 0.0}
        at = [min(len(recent) - 1, int(q * len(recent))) for q in (0.5, 0.95)]
        return {
            "revisit_lateness_p50": round(recent[at[0]], 3),
            "revisit_lateness_p95": round(recent[at[1]], 3),
        }
