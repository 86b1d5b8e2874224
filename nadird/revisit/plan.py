"""A domain's revisit plan from counts of pages per rate class (pure).

The master cannot re-solve allocate.py per page for millions of URLs on a
timer, so it keeps, per domain, how many adaptive pages sit in each
(schedule, rate class) group, moving a page between groups when its fetch
updates its estimate. A plan is the allocation over those groups, a few
hundred at most, whatever the number of pages; a page's due time then uses its
group's interval. Rate classes are `CLASSES_PER_DECADE` log-spaced bins
(±3.7 % around their centre, the class rate used): freshness is flat near the
optimum, so the loss is as small as allocate.py's own classes'.

Exploration. A page whose every check saw a change, at an unknown time (no
Last-Modified), has only a lower bound on its rate, and the allocation fed
that bound checks it about as often as before, so the bound never moves: in
the living-web benchmark such pages took a fifth of the budget. The
allocation leaves a page at `max` when its rate exceeds λ* = 1/μ (μ its
Lagrange multiplier), so what is worth knowing is whether λ lies above λ*.
One check after τ sees no change with probability e^{−λτ}; its Fisher
information about log λ is x² e^{−x}/(1 − e^{−x}) with x = λτ, largest at
x ≈ 1.59, but what decides is the estimate a few such checks give: k probes
that all saw a change read as ln(2k + 1)/τ (the half-change correction), so
at τ = 1.59/λ* two of them only reach λ* itself, and the page stays in doubt.
At τ = `PROBE_FACTOR`·μ = 0.5/λ* one changed probe reads as 2.2 λ*, beyond
reach with margin, while a page at λ* shows no change with probability
e^{−0.5} = 0.61 per probe (0.39 of the best information per probe at λ*,
60 % of the most). A quiet regular check ends the exploration, and so does
a second quiet probe: after one, a page at 2.5 λ* (quiet in a probe 29 % of
the time) was left checked at its old interval for good.
schedule.py makes one after each regular check of such a page (only while
every check saw a change, and only when τ is short beside its usual
interval), and estimate.py keeps short checks in their own group of the
likelihood, so two or three of them settle which side of λ* the page is on.
A page beyond reach is then checked at `max`, plus one probe per `max`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from nadird.revisit.allocate import allocate_classes, interval_at
from nadird.revisit.estimate import ChangeStats
from nadird.revisit.policy import Adaptive, RevisitPolicy

CLASSES_PER_DECADE = 32
PROBE_FACTOR = 0.5  # τ = 0.5/λ*, see the docstring
_SLOWEST = 1e-12  # changes/s; a class for rates below it (and zero)

# A page's group in its domain: (its schedule's rule, its rate class); the
# class is None before its first revisit, while the rate is unknown.
Group = tuple[int, int | None]
DEFAULT_RULE = -1


def rate_class(rate: float) -> int:
    """The log-spaced class of a rate (changes per second)."""
    return math.floor(math.log10(max(rate, _SLOWEST)) * CLASSES_PER_DECADE)


def class_rate(klass: int) -> float:
    """The geometric centre of a rate class."""
    return float(10.0 ** ((klass + 0.5) / CLASSES_PER_DECADE))


def adaptive_rule(policy: RevisitPolicy, url: str) -> tuple[int, Adaptive] | None:
    """(rule index or DEFAULT_RULE, schedule) when `url`'s schedule is adaptive."""
    for index, rule in enumerate(policy.rules):
        if rule.pattern.search(url):
            return (index, rule.schedule) if isinstance(rule.schedule, Adaptive) else None
    if isinstance(policy.default, Adaptive):
        return DEFAULT_RULE, policy.default
    return None


def group_of(policy: RevisitPolicy, url: str, stats: ChangeStats) -> Group | None:
    """The page's group: None unless its schedule is adaptive."""
    found = adaptive_rule(policy, url)
    if found is None:
        return None
    rate = stats.planning_rate()
    return found[0], None if rate is None else rate_class(rate)


def schedule_of(policy: RevisitPolicy, rule: int) -> Adaptive | None:
    """The adaptive schedule a stored rule index names now (None if it no longer does)."""
    if rule == DEFAULT_RULE:
        schedule = policy.default
    elif 0 <= rule < len(policy.rules):
        schedule = policy.rules[rule].schedule
    else:
        return None
    return schedule if isinstance(schedule, Adaptive) else None


def plan_groups(
    groups: Sequence[tuple[int | None, int, Adaptive]], budget: float
) -> tuple[list[float | None], float]:
    """Intervals for (rate class or None, pages, schedule) groups sharing `budget`
    fetches per second, and the multiplier μ (inf: nothing left to share).

    Pages whose rate is unknown yet are planned at their schedule's first
    interval, which is taken off the budget first; their groups get None.
    """
    first = sum(count / schedule.first_interval for k, count, schedule in groups if k is None)
    left = budget - first
    known = [
        (class_rate(k), count, schedule.min, schedule.max)
        for k, count, schedule in groups
        if k is not None
    ]
    if not known or not left > 0 or not math.isfinite(left):
        return [None] * len(groups), math.inf
    intervals, mu = allocate_classes(known, left)
    solved = iter(intervals)
    return [None if k is None else next(solved) for k, _, _ in groups], mu


def class_interval(mu: float, klass: int, schedule: Adaptive) -> float | None:
    """The interval a plan of multiplier `mu` gives a class it did not solve
    (a page whose estimate moved into it since): the optimum depends on μ and
    the rate alone. None when μ is not finite (the plan stretched every page)."""
    if not math.isfinite(mu):
        return None
    return interval_at(mu, class_rate(klass), schedule.min, schedule.max)


def probe_interval(mu: float) -> float | None:
    """The exploratory interval `PROBE_FACTOR`·μ; None when no page is left at
    max for its rate (μ = 0: all at min; inf: the budget does not cover max)."""
    return None if mu <= 0 or not math.isfinite(mu) else PROBE_FACTOR * mu
