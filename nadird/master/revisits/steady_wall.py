"""Wall-clock time that does not run backwards within a run.

Revisit times are stored as wall-clock epoch seconds, so a clock set back
by a day would make every stored due time a day further away: a stall. And
a fetch recorded at the earlier time would be due again at once, checked
too early, then measured from the wrong origin. Within a run the master
reads the wall clock through this guard: a reading behind the last one plus
the monotonic time since (by more than a few seconds' tolerance) is replaced
by that sum, so time keeps moving at the monotonic pace until the wall clock
catches up. A jump forward is
followed (it is how a clock gets corrected, and the due scan's per-scan
limit spreads what it makes due).
"""

from __future__ import annotations

from collections.abc import Callable

Clock = Callable[[], float]
# A reading at most this far behind is taken as it is: the two clocks are
# read one after the other and slewed apart by NTP, and seconds of stall
# are harmless; the guard is for clocks set back by minutes or days.
TOLERANCE = 5.0


class SteadyWall:
    def __init__(self, wall: Clock, clock: Clock) -> None:
        self._wall = wall
        self._clock = clock
        self._last = wall()
        self._at = clock()
        self.set_back = 0  # readings the guard moved forward (the clock had gone back)

    def __call__(self) -> float:
        wall, mono = self._wall(), self._clock()
        steady = self._last + max(0.0, mono - self._at)
        if wall >= steady - TOLERANCE:
            self._last = wall
        else:
            self._last = steady
            self.set_back += 1
        self._at = mono
        return self._last
