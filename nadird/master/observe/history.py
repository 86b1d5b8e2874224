"""The crawl's numbers over time: a small ring of samples the master keeps.

The master takes a `Sample` every `every` seconds (console.history_every):
its counters (records stored, failures by kind) and its gauges (queued
URLs, leases out, revisits due and late). Two rings hold them: the last
FINE_SAMPLES samples (an hour at the default 10 s), and every COARSE_EVERY-th
sample for the last COARSE_SAMPLES (a day at 5 min). Memory is bounded by
the rings' lengths (see docs/BENCHMARKS.md for what a sample weighs); the
rings are not kept across a restart, so a chart starts at the master's start.

Rates are differences of counters between consecutive samples of a ring,
over the time between them. A sample more than GAP_STEPS steps after the one
before it (the master's loop held up, a machine suspended) has no rate: the
chart shows a gap there, not a made-up average.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

FINE_SAMPLES = 360  # an hour at 10 s
COARSE_EVERY = 30  # every 30th sample goes to the coarse ring (5 min at 10 s)
COARSE_SAMPLES = 288  # a day at 5 min
GAP_STEPS = 3.0  # a sample further than this many steps from the last: no rate
TOP_KINDS = 5  # error kinds charted apart; the rest as "other"
Window = Literal["hour", "day"]
WINDOWS: tuple[Window, ...] = ("hour", "day")
GAUGES = ("queued", "leases", "revisits_due", "revisits_late")


@dataclass(frozen=True, slots=True)
class Sample:
    at: float  # wall clock, epoch seconds
    stored: int  # records written this run (a counter)
    errors: tuple[tuple[str, int], ...]  # failures by kind (counters), non-zero ones
    queued: int
    leases: int
    revisits_due: int
    revisits_late: int  # due longer than a minute

    @staticmethod
    def errors_of(counts: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
        return tuple(sorted((kind, n) for kind, n in counts.items() if n))


class StatsHistory:
    def __init__(
        self,
        every: float,
        fine: int = FINE_SAMPLES,
        coarse_every: int = COARSE_EVERY,
        coarse: int = COARSE_SAMPLES,
    ) -> None:
        self.every = every
        self.coarse_every = coarse_every
        self.fine: deque[Sample] = deque(maxlen=fine)
        self.coarse: deque[Sample] = deque(maxlen=coarse)
        self._taken = 0
        self._next_at: float | None = None  # monotonic time of the next sample

    def due(self, now: float) -> bool:
        """Whether a sample is due at monotonic time `now` (then the next one is set)."""
        if self._next_at is not None and now < self._next_at:
            return False
        self._next_at = now + self.every
        return True

    def add(self, sample: Sample) -> None:
        self.fine.append(sample)
        if self._taken % self.coarse_every == 0:
            self.coarse.append(sample)
        self._taken += 1

    def series(self, window: Window) -> dict[str, Any]:
        """The window's samples as columns (the JSON of /api/stats/history)."""
        ring = self.fine if window == "hour" else self.coarse
        step = self.every if window == "hour" else self.every * self.coarse_every
        return series_of(list(ring), step, window)


def series_of(samples: list[Sample], step: float, window: str) -> dict[str, Any]:
    kinds = _top_kinds(samples)
    rates: list[float | None] = []
    by_kind: dict[str, list[float | None]] = {kind: [] for kind in kinds}
    before: Sample | None = None
    for sample in samples:
        span = 0.0 if before is None else sample.at - before.at
        if before is None or not 0 < span <= GAP_STEPS * step:  # the first, or after a gap
            rates.append(None)
            for column in by_kind.values():
                column.append(None)
        else:
            rates.append(round((sample.stored - before.stored) / span, 3))
            for kind, per_s in _error_rates(before, sample, span, kinds).items():
                by_kind[kind].append(per_s)
        before = sample
    return {
        "window": window,
        "step": step,
        "samples": len(samples),
        "time": [round(s.at, 3) for s in samples],
        "pages_per_s": rates,
        "errors_per_s": by_kind,
        **{gauge: [getattr(s, gauge) for s in samples] for gauge in GAUGES},
    }


def _top_kinds(samples: list[Sample]) -> list[str]:
    """The kinds that failed most within the window, then "other" if any is left."""
    if len(samples) < 2:
        return []
    first, last = dict(samples[0].errors), dict(samples[-1].errors)
    grown = {kind: n - first.get(kind, 0) for kind, n in last.items() if n > first.get(kind, 0)}
    ranked = sorted(grown, key=lambda kind: (-grown[kind], kind))
    return ranked[:TOP_KINDS] + (["other"] if len(ranked) > TOP_KINDS else [])


def _error_rates(
    before: Sample, after: Sample, span: float, kinds: Iterable[str]
) -> dict[str, float]:
    old, new = dict(before.errors), dict(after.errors)
    grown = {kind: max(0, n - old.get(kind, 0)) for kind, n in new.items()}
    named = [kind for kind in kinds if kind != "other"]
    rates = {kind: round(grown.get(kind, 0) / span, 3) for kind in named}
    if "other" in kinds:
        rest = sum(n for kind, n in grown.items() if kind not in rates)
        rates["other"] = round(rest / span, 3)
    return rates
