"""How often a page changes, from the revisits that saw it changed or not.

Model: a page's changes form a Poisson process of rate λ (changes/second).
A check after an interval I tells only whether at least one change happened
(probability 1 − e^{−λI}), so counting changes per time, X/(nI), is biased
low: it can never exceed one change per check. Cho & Garcia-Molina,
"Estimating frequency of change" (ACM TOIT 2003) give the estimators used here:

- regular checks, n of them I apart, X saw a change:
  λ̂ = −ln((n − X + 0.5)/(n + 0.5)) / I                       (`cho_rate`)
- irregular intervals: the maximum-likelihood λ solving
  Σ_changed I_i/(e^{λI_i} − 1) = Σ_unchanged I_i               (`mle_rate`)
- Last-Modified known: a changed check whose last change was `age` before it
  says "a change at t − age, none after", contributing ln λ − λ·age to the
  log-likelihood; an unchanged one −λI. Alone they give λ̂ = X / (time known
  change-free).

Both likelihood terms combine in one equation, solved by Newton's method,
which converges monotonically here (the left side is convex and decreasing
in λ, and the iteration starts from a lower bound). A pseudo-observation of
half an average interval without a change is added to the change-free time:
it keeps λ̂ finite when every check saw a change, and with regular
intervals it turns the maximum-likelihood estimate into exactly Cho's
bias-reduced estimator above.

Per URL only `ChangeStats` is kept: eight floats (sums, not lists of
intervals, as it is stored for millions of URLs). The changed intervals
enter the likelihood only through their count and sum, i.e. as if all had
their mean length: exact when the schedule keeps the interval steady, and
slightly low (Jensen) when changed intervals vary widely. Changed checks much
shorter than the page's mean interval (exploratory checks, see schedule.py)
are summed apart, as a second group of the likelihood: mixed with the long
ones, the one mean would wash out exactly what they were made to tell. The sums decay by
1/memory per check, so the estimate follows a page whose habits change,
with an effective sample of about `memory` checks.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple

DEFAULT_MEMORY = 64.0
HALF_CHANGE = 0.5  # changes assumed seen when planning for a page never seen to change
SHORT_SPLIT = 0.25  # a check shorter than this share of the mean interval is a short one
# Last-Modified has one-second resolution, and a server that stamps every
# answer with the time of the request says nothing: an age under a second
# counts as a change at an unknown time.
DATED_RESOLUTION = 1.0
CENSORED_CHECKS = 2.0  # checks in memory before "all of them changed" means anything
_MAX_STEPS = 60
_EXP_LIMIT = 700.0  # e^x overflows a double just above 709


def cho_rate(checks: int, changes: int, interval: float) -> float:
    """Cho & Garcia-Molina's estimate for `checks` checks `interval` seconds apart."""
    if checks <= 0 or interval <= 0 or not 0 <= changes <= checks:
        raise ValueError("expected checks > 0, 0 <= changes <= checks and interval > 0")
    return -math.log((checks - changes + 0.5) / (checks + 0.5)) / interval


def _blind_terms(blind: Sequence[tuple[float, float]], rate: float) -> tuple[float, float]:
    """Σ w·a/(e^{λa} − 1) and its derivative in λ, over (weight, interval) pairs."""
    value = slope = 0.0
    for weight, interval in blind:
        x = rate * interval
        if x > _EXP_LIMIT:
            continue
        # In e^{-x} form: e^x (e^x − 1)^{-2} overflows to inf/inf for x near
        # the limit, which made Newton's step NaN.
        decay = math.exp(-x)
        gap = -math.expm1(-x)  # 1 − e^{−x}
        value += weight * interval * decay / gap
        slope -= weight * interval * interval * decay / (gap * gap)
    return value, slope


def solve_rate(blind: Sequence[tuple[float, float]], dated: float, clear: float) -> float:
    """The λ where Σ w·a/(e^{λa} − 1) + dated/λ = clear (0 without any change).

    `blind`: (count, interval) of checks that saw a change at an unknown time;
    `dated`: changes with a known time; `clear`: seconds known change-free (> 0).
    """
    changes = sum(w for w, _ in blind) + dated
    if changes <= 0:
        return 0.0
    if clear <= 0:
        raise ValueError("expected some change-free time (clear > 0)")
    # a/(e^{λa}−1) lies in [1/λ − a/2, 1/λ]: the root lies between these two.
    rate = changes / (clear + sum(w * a for w, a in blind) / 2.0)
    upper = changes / clear
    for _ in range(_MAX_STEPS):
        value, slope = _blind_terms(blind, rate)
        excess = value + dated / rate - clear
        slope -= dated / (rate * rate)
        step = -excess / slope
        rate = min(rate + step, upper)
        if abs(step) <= 1e-12 * rate:
            break
    return rate


def mle_rate(checks: Iterable[tuple[float, bool]]) -> float:
    """Maximum-likelihood rate from (interval, changed) checks at irregular intervals."""
    blind: list[tuple[float, float]] = []
    clear = total = 0.0
    count = 0
    for interval, changed in checks:
        if interval <= 0:
            raise ValueError(f"expected intervals > 0, got {interval}")
        count += 1
        total += interval
        if changed:
            blind.append((1.0, interval))
        else:
            clear += interval
    if count == 0:
        raise ValueError("expected at least one check")
    return solve_rate(blind, 0.0, clear + 0.5 * total / count)


class ChangeStats(NamedTuple):
    """Decayed sufficient statistics of one URL's checks (see the module docstring)."""

    checks: float = 0.0
    blind_changes: float = 0.0  # changed, time of the change unknown
    blind_time: float = 0.0  # summed intervals of those checks
    dated_changes: float = 0.0  # changed, Last-Modified inside the interval
    clear_time: float = 0.0  # seconds known to have had no change
    short_changes: float = 0.0  # blind changes seen by short checks (`is_short`)
    short_time: float = 0.0  # summed intervals of those checks
    total_time: float = 0.0  # summed intervals of all checks

    def mean_interval(self) -> float:
        """Mean seconds between checks (0 before any, or for statistics stored
        before `total_time` was kept)."""
        return self.total_time / self.checks if self.checks > 0 else 0.0

    def regular_interval(self) -> float:
        """Mean seconds between regular (not exploratory) checks.

        Exploratory checks are made only while every check sees a change, so
        they are the changed short ones; counted in the plain mean, they held
        a probed page's next interval at about the last one (twice a mean
        halved by the probes), and a page changing every minute never moved
        towards `max`.
        """
        checks = self.checks - self.short_changes
        if checks < 0.5:
            return self.mean_interval()
        return max(self.total_time - self.short_time, 0.0) / checks

    def is_short(self, interval: float) -> bool:
        """Whether a check `interval` after the last one is a short (exploratory) one."""
        return 0.0 < interval < SHORT_SPLIT * self.mean_interval()

    def censored(self) -> bool:
        """Whether every check in memory saw a change, at an unknown time.

        Then the likelihood only bounds the rate from below (Cho's ln(2n + 1)/I
        for n such checks I apart), and an allocation fed that bound keeps
        checking at about the same interval, which never moves it.
        """
        unchanged = self.checks - self.blind_changes - self.short_changes - self.dated_changes
        if self.checks < CENSORED_CHECKS or self.dated_changes >= 0.5:
            return False
        if unchanged < 0.5:
            return True
        # One quiet exploratory check does not settle it: a page at 2.5 λ*
        # shows none in a probe with probability 0.29, and ended there it
        # stayed checked at its old interval, every check changed, the bound
        # rising as slowly as ln n. While every quiet check was a short one
        # (their time fits in short checks), the regular checks are still
        # all changed: a second quiet probe ends the exploration.
        quiet_were_short = self.clear_time <= unchanged * SHORT_SPLIT * self.regular_interval()
        return unchanged < 1.5 and quiet_were_short

    def observe(
        self,
        interval: float,
        changed: bool,
        modified_age: float | None = None,
        memory: float | None = DEFAULT_MEMORY,
    ) -> ChangeStats:
        """The statistics after one more check, `interval` seconds after the last.

        `modified_age` is check time minus Last-Modified; it is used only for a
        changed check and only when it falls inside the interval (a server whose
        date says "before the last check" although the content changed is not
        believed). A non-positive interval (a clock set back) tells nothing.
        """
        if not interval > 0 or not math.isfinite(interval):
            return self
        short = self.is_short(interval)
        keep = 1.0 - 1.0 / memory if memory else 1.0
        checks, blind, blind_time, dated, clear, short_n, short_t, total = (keep * v for v in self)
        checks += 1.0
        total += interval
        if not changed:
            clear += interval
        elif modified_age is not None and DATED_RESOLUTION <= modified_age < interval:
            dated += 1.0
            clear += modified_age
        elif short:
            short_n += 1.0
            short_t += interval
        else:
            blind += 1.0
            blind_time += interval
        return ChangeStats(checks, blind, blind_time, dated, clear, short_n, short_t, total)

    def _pseudo(self) -> float:
        """Half an average interval, or half a short one when short checks saw changes.

        The mean comes from `total_time`: the other sums leave out the part of
        a dated check's interval before its change, all of it when the page
        changed in the second of the check (Last-Modified = now), which left
        no change-free time at all to solve with.
        """
        known = self.clear_time + self.blind_time + self.short_time
        mean = max(self.total_time, known) / self.checks
        if self.short_changes > 0:
            mean = min(mean, self.short_time / self.short_changes)
        blind = self.blind_changes + self.short_changes
        changes = blind + self.dated_changes
        if changes <= 0:
            return 0.5 * mean
        # A dated change already tells its change-free time (the page's age
        # at the check, about 1/λ): its half-change correction is half of
        # that, not half an interval, which for a page checked far less
        # often than it changes (λI >> 1) swamped the ages and read a page
        # changing every minute, checked every 13 hours, as 1/1,400 s.
        dated_pseudo = 0.5 * self.clear_time / self.checks
        share = blind / changes
        return share * 0.5 * mean + (1.0 - share) * max(dated_pseudo, DATED_RESOLUTION)

    def rate(self) -> float | None:
        """Estimated changes per second; None before any check."""
        if self.checks <= 0:
            return None
        blind = [
            (count, time / count)
            for count, time in (
                (self.blind_changes, self.blind_time),
                (self.short_changes, self.short_time),
            )
            if count > 0
        ]
        return solve_rate(blind, self.dated_changes, self.clear_time + self._pseudo())

    def planning_rate(self) -> float | None:
        """The rate to plan revisits with: `rate()`, but never 0 once checked.

        With no change seen, the maximum-likelihood rate is 0, and a planner
        given 0 sends the page to its longest interval, where a slow page's
        first change then goes unseen for days. Planning with half a change
        over the time watched (the same half-count correction as Cho's
        estimator, applied to an empty count) keeps such a page checked at a
        rate that falls as the quiet time grows. On the living web's rate
        tiers this raised the adaptive policy's freshness by 3 % at the same
        budget (docs/BENCHMARKS.md, revisit policies).
        """
        rate = self.rate()
        if rate != 0.0:
            return rate
        return HALF_CHANGE / (self.clear_time + self._pseudo())
