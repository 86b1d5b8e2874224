"""The per-domain plan over rate classes, and exploratory checks (pure, no I/O)."""

from __future__ import annotations

import math
import random

import pytest

from nadird.revisit.allocate import allocate, allocate_classes
from nadird.revisit.estimate import ChangeStats
from nadird.revisit.plan import (
    PROBE_FACTOR,
    class_interval,
    class_rate,
    plan_groups,
    probe_interval,
    rate_class,
)
from nadird.revisit.policy import Adaptive, Fixed
from nadird.revisit.schedule import UrlState, adaptive_interval, is_probe, next_due, record_fetch

SCHEDULE = Adaptive(min=60.0, max=7 * 86400.0, initial=3600.0)


def test_class_solve_is_the_page_solve_with_pages_counted() -> None:
    rates = [1 / 60] * 5 + [1 / 600] * 10 + [1 / 3600] * 20 + [1 / 86400] * 15
    pages = allocate(rates, 1 / 72, (60.0, 604800.0), classes_per_decade=None)
    classes = [(r, rates.count(r), 60.0, 604800.0) for r in sorted(set(rates))]
    intervals, mu = allocate_classes(classes, 1 / 72)
    by_rate = dict(zip(sorted(set(rates)), intervals, strict=True))
    assert [by_rate[r] for r in rates] == pytest.approx(pages.intervals, rel=1e-9)
    assert mu == pytest.approx(pages.multiplier, rel=1e-9)
    with pytest.raises(ValueError):
        allocate_classes([(1.0, 0, 60.0, 600.0)], 1.0)


def test_rate_classes_are_narrow_and_centred() -> None:
    for rate in (1 / 60, 1 / 600, 1 / 86400, 3.7e-9):
        centre = class_rate(rate_class(rate))
        assert abs(math.log10(centre / rate)) <= 0.5 / 32 + 1e-12
    assert rate_class(0.0) == rate_class(1e-13)  # zero gets the slowest class


def test_unknown_pages_take_their_first_interval_off_the_budget() -> None:
    budget = 1 / 10
    groups = [(None, 36, SCHEDULE), (rate_class(1 / 600), 10, SCHEDULE)]
    intervals, _ = plan_groups(groups, budget)
    assert intervals[0] is None and intervals[1] is not None
    # 36 pages at 3600 s take 0.01/s; the ten known ones share the other 0.09/s.
    assert 10 / intervals[1] == pytest.approx(budget - 36 / 3600, rel=1e-9)
    assert plan_groups([(None, 400, SCHEDULE)], budget) == ([None], math.inf)
    assert probe_interval(math.inf) is None and probe_interval(0.0) is None
    assert probe_interval(100.0) == PROBE_FACTOR * 100.0


def _censored(interval: float, checks: int) -> UrlState:
    state = record_fetch(None, 0.0, False)
    for i in range(1, checks + 1):
        state = record_fetch(state, i * interval, True)
    return state


def test_a_page_that_changed_at_every_check_gets_one_probe_after_each_regular_check() -> None:
    state = _censored(2000.0, 4)
    assert state.stats.censored()
    probe = 250.0
    assert adaptive_interval(SCHEDULE, state, allocated=2000.0, probe=probe) == probe
    assert is_probe(state, state.last_fetch + probe)
    assert not is_probe(state, state.last_fetch + 2000.0)
    after = record_fetch(state, state.last_fetch + probe, True)
    assert after.stats.short_changes == 1.0  # kept apart from the long checks
    # Right after a probe: the allocated interval, growing from the usual one
    # (the regular checks' 2000 s, not a mean the probe pulled down).
    assert after.stats.regular_interval() == pytest.approx(2000.0)
    assert adaptive_interval(SCHEDULE, after, allocated=10_000.0, probe=probe) == pytest.approx(
        2 * 2000.0
    )
    # No probe without one, for a page with an unchanged check, or when it is not short.
    assert adaptive_interval(SCHEDULE, state, allocated=2000.0) == 2000.0
    quiet = record_fetch(state, state.last_fetch + 2000.0, False)
    assert not quiet.stats.censored()
    assert adaptive_interval(SCHEDULE, quiet, allocated=2000.0, probe=probe) == 2000.0
    assert adaptive_interval(SCHEDULE, state, allocated=2000.0, probe=1500.0) == 2000.0


def _checks(rate: float, intervals: list[float], seed: int) -> ChangeStats:
    """A Poisson page of `rate` checked after each of `intervals`."""
    rng = random.Random(seed)
    stats = ChangeStats()
    for interval in intervals:
        changed = rng.random() < -math.expm1(-rate * interval)
        stats = stats.observe(interval, changed)
    return stats


@pytest.mark.parametrize("seed", range(8))
def test_probes_tell_a_page_beyond_reach_from_one_within_it(seed: int) -> None:
    """Checked every 4000 s, pages changing every minute and every ten minutes
    both change at every check: the estimate is the same lower bound. With the
    probe a domain whose threshold is λ* = 1/300 makes (0.5/λ* = 150 s) after
    each check, the first reads beyond λ*, the second within it."""
    regular = [4000.0] * 12
    fast, slow = _checks(1 / 60, regular, seed), _checks(1 / 600, regular, seed)
    assert fast.censored() and slow.censored()
    assert fast.rate() == pytest.approx(slow.rate())  # indistinguishable
    probed = [x for _ in range(12) for x in (4000.0, 150.0)]
    fast, slow = _checks(1 / 60, probed, seed), _checks(1 / 600, probed, seed)
    fast_rate, slow_rate = fast.rate(), slow.rate()
    assert fast_rate is not None and slow_rate is not None
    assert fast_rate > 2 / 300 and slow_rate < 1 / 300


def test_a_class_the_plan_did_not_solve_gets_what_the_multiplier_gives() -> None:
    rates = (1 / 60, 1 / 600, 1 / 3600, 1 / 86400)
    groups = [(rate_class(r), 10, SCHEDULE) for r in rates]
    intervals, mu = plan_groups(groups, 1 / 72)
    for (klass, _, _), solved in zip(groups, intervals, strict=True):
        assert class_interval(mu, klass, SCHEDULE) == pytest.approx(solved, rel=1e-6)
    # Beyond reach: the longest interval; nothing to give when μ is not finite.
    assert class_interval(mu, rate_class(1.0), SCHEDULE) == SCHEDULE.max
    assert class_interval(math.inf, rate_class(1.0), SCHEDULE) is None


def test_a_late_fetch_shortens_the_next_interval_by_its_lateness_up_to_half() -> None:
    state = record_fetch(record_fetch(None, 0.0, False), 3600.0, True)
    on_time = next_due(SCHEDULE, "u", state, allocated=2000.0)
    assert on_time == 3600.0 + 2000.0
    assert next_due(SCHEDULE, "u", state, allocated=2000.0, late=300.0) == on_time - 300.0
    assert next_due(SCHEDULE, "u", state, allocated=2000.0, late=86400.0) == on_time - 1000.0
    assert next_due(SCHEDULE, "u", state, allocated=2000.0, late=-50.0) == on_time
    fixed = Fixed(every=600.0)
    assert next_due(fixed, "u", state, late=300.0) == 3600.0 + 600.0  # adaptive only
