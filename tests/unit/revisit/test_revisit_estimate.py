"""Change-rate estimators against simulated Poisson pages (seeded)."""

from __future__ import annotations

import math
import random

import pytest

from nadird.revisit.estimate import ChangeStats, cho_rate, mle_rate, solve_rate

HOUR = 3600.0


def poisson_changes(rng: random.Random, rate: float, start: float, end: float) -> list[float]:
    """Change times of a Poisson process in (start, end]."""
    times, t = [], start
    while True:
        t += rng.expovariate(rate)
        if t > end:
            return times
        times.append(t)


def checks_of(
    rng: random.Random, rate: float, intervals: list[float]
) -> list[tuple[float, bool, float | None]]:
    """(interval, changed, seconds since the last change if changed) per check."""
    result: list[tuple[float, bool, float | None]] = []
    now = 0.0
    for interval in intervals:
        changes = poisson_changes(rng, rate, now, now + interval)
        now += interval
        result.append((interval, bool(changes), now - changes[-1] if changes else None))
    return result


@pytest.mark.parametrize("changes_per_check", [0.1, 0.5, 1.0, 2.0])
def test_cho_estimator_is_close_where_the_naive_one_is_biased(changes_per_check: float) -> None:
    rng = random.Random(7)
    rate, n = 1 / HOUR, 20000
    interval = changes_per_check / rate
    seen = sum(1 for _ in range(n) if rng.random() < -math.expm1(-rate * interval))
    estimate = cho_rate(n, seen, interval)
    naive = seen / (n * interval)
    assert estimate == pytest.approx(rate, rel=0.04)
    if changes_per_check >= 1.0:  # a check sees at most one change: far too low
        assert naive < 0.7 * rate


def test_cho_estimator_stays_finite_when_every_check_changed() -> None:
    assert math.isfinite(cho_rate(10, 10, HOUR))
    assert cho_rate(10, 0, HOUR) == 0.0
    with pytest.raises(ValueError):
        cho_rate(3, 4, HOUR)


def test_mle_with_regular_intervals_is_chos_estimator() -> None:
    checks = [(HOUR, True)] * 30 + [(HOUR, False)] * 70
    assert mle_rate(checks) == pytest.approx(cho_rate(100, 30, HOUR), rel=1e-9)


def test_irregular_interval_mle_finds_the_rate() -> None:
    rng = random.Random(11)
    rate = 1 / (2 * HOUR)
    intervals = [rng.uniform(0.1, 6.0) * HOUR for _ in range(20000)]
    checks = checks_of(rng, rate, intervals)
    estimate = mle_rate((i, changed) for i, changed, _ in checks)
    assert estimate == pytest.approx(rate, rel=0.04)
    # Treating the mean interval as if all were equal misses by more.
    n, seen = len(checks), sum(1 for c in checks if c[1])
    assert abs(cho_rate(n, seen, sum(intervals) / n) - rate) > 0.05 * rate


def test_mle_solution_sets_the_likelihood_slope_to_zero() -> None:
    checks = [(600.0, True), (7200.0, True), (1800.0, False), (3600.0, False), (900.0, True)]
    rate = mle_rate(checks)
    pseudo = 0.5 * sum(i for i, _ in checks) / len(checks)
    slope = sum(i / math.expm1(rate * i) for i, c in checks if c)
    slope -= sum(i for i, c in checks if not c) + pseudo
    assert abs(slope) < 1e-6 * pseudo


def test_last_modified_dates_give_the_rate() -> None:
    rng = random.Random(5)
    rate = 20 / HOUR  # about 20 changes per hourly check: checks alone saturate
    checks = checks_of(rng, rate, [HOUR] * 2000)
    dated = blind = ChangeStats()
    for interval, changed, age in checks:
        dated = dated.observe(interval, changed, modified_age=age, memory=None)
        blind = blind.observe(interval, changed, memory=None)
    # Ages under a second (Last-Modified's resolution) count as changes at an unknown time.
    assert dated.dated_changes > 0.99 * len(checks) and dated.blind_changes < 0.01 * len(checks)
    assert dated.rate() == pytest.approx(rate, rel=0.04)
    assert solve_rate([], dated.dated_changes, dated.clear_time) == pytest.approx(
        dated.dated_changes / dated.clear_time
    )
    assert (blind.rate() or 0) < 0.6 * rate  # every check saw a change: a lower bound only


def test_an_implausible_last_modified_counts_as_a_change_at_an_unknown_time() -> None:
    stats = ChangeStats().observe(HOUR, True, modified_age=5 * HOUR)
    assert (stats.blind_changes, stats.dated_changes) == (1.0, 0.0)
    # A server that stamps every answer with the time of the request.
    stats = ChangeStats().observe(HOUR, True, modified_age=0.0)
    assert (stats.blind_changes, stats.dated_changes) == (1.0, 0.0)
    stats = ChangeStats().observe(HOUR, True, modified_age=-60.0)
    assert stats.blind_changes == 1.0


def test_incremental_stats_match_the_full_mle() -> None:
    rng = random.Random(3)
    rate = 1 / HOUR
    intervals = [rng.uniform(0.5, 1.5) * HOUR for _ in range(5000)]
    checks = checks_of(rng, rate, intervals)
    stats = ChangeStats()
    for interval, changed, _ in checks:
        stats = stats.observe(interval, changed, memory=None)
    exact = mle_rate((i, c) for i, c, _ in checks)
    assert stats.rate() == pytest.approx(exact, rel=0.02)
    assert stats.rate() == pytest.approx(rate, rel=0.05)


def test_decayed_stats_follow_a_page_that_starts_changing_faster() -> None:
    rng = random.Random(9)
    stats = ChangeStats()
    for interval, changed, _ in checks_of(rng, 1 / (10 * HOUR), [HOUR] * 400):
        stats = stats.observe(interval, changed)
    before = stats.rate() or 0.0
    assert before == pytest.approx(1 / (10 * HOUR), rel=0.5)
    for interval, changed, _ in checks_of(rng, 1 / HOUR, [HOUR] * 400):
        stats = stats.observe(interval, changed)
    assert stats.rate() == pytest.approx(1 / HOUR, rel=0.3)
    assert stats.checks < 64.0  # bounded memory, bounded weights


def test_state_is_eight_numbers_and_ignores_nonsense_intervals() -> None:
    stats = ChangeStats()
    assert stats.rate() is None
    assert stats.observe(-5.0, True) == stats
    assert stats.observe(float("nan"), True) == stats
    stats = stats.observe(HOUR, False)
    assert stats.rate() == 0.0
    assert len(tuple(stats)) == 8 and all(isinstance(v, float) for v in stats)
    # A row stored with the five sums of before loads, and plans as it did.
    old = ChangeStats(*tuple(stats)[:5])
    assert old.rate() == stats.rate() and old.mean_interval() == 0.0


def test_planning_rate_is_half_a_change_over_the_quiet_time() -> None:
    assert ChangeStats().planning_rate() is None
    quiet = ChangeStats()
    for _ in range(4):
        quiet = quiet.observe(HOUR, False, memory=None)
    assert quiet.rate() == 0.0
    # 4 quiet hours plus the half-interval pseudo-observation: 0.5 / 4.5 h.
    assert quiet.planning_rate() == pytest.approx(0.5 / (4.5 * HOUR))
    longer = quiet.observe(4 * HOUR, False, memory=None)
    assert 0 < (longer.planning_rate() or 0) < (quiet.planning_rate() or 0)  # falls with time
    changed = quiet.observe(HOUR, True)
    assert changed.planning_rate() == changed.rate() > 0  # a seen change: the estimate itself


def test_a_change_dated_at_the_check_itself_still_gives_a_rate() -> None:
    # Last-Modified equal to the check time: a change with no time known
    # change-free in that interval; the estimate must still be finite.
    stats = ChangeStats().observe(HOUR, True, modified_age=0.0)
    rate = stats.rate()
    assert rate is not None and 0 < rate < math.inf


def test_last_modified_gives_the_rate_of_a_page_checked_far_less_often_than_it_changes() -> None:
    # A page changing every minute, checked every 13 hours: each check's
    # Last-Modified age (about a minute) is the whole of what is known.
    rng = random.Random(11)
    rate = 1 / 60
    stats = ChangeStats()
    for interval, changed, age in checks_of(rng, rate, [13 * HOUR] * 30):
        stats = stats.observe(interval, changed, modified_age=age)
    assert stats.dated_changes > 0.95 * stats.checks
    # Half an interval of pseudo change-free time read it as about 1/1,400 s.
    assert stats.rate() == pytest.approx(rate, rel=0.25)


def test_the_rate_is_finite_where_e_to_the_x_squared_overflows() -> None:
    # Long checks that all changed (λI near the exp limit) beside short ones:
    # Newton's slope was inf/inf = NaN there.
    stats = ChangeStats(
        checks=20.14,
        blind_changes=10.70,
        blind_time=767_092.6,
        short_changes=9.44,
        short_time=2_930.0,
        total_time=770_022.6,
    )
    rate = stats.rate()
    assert rate is not None and math.isfinite(rate) and rate > 1 / 310


def _long_changed_checks(count: int, interval: float) -> ChangeStats:
    stats = ChangeStats()
    for _ in range(count):
        stats = stats.observe(interval, True)
    return stats


def test_one_quiet_probe_does_not_end_the_exploration_but_two_do() -> None:
    stats = _long_changed_checks(6, 20_000.0)
    assert stats.censored()
    once = stats.observe(500.0, False)  # a probe that saw no change
    assert once.censored()
    twice = once.observe(20_000.0, True).observe(500.0, False)
    assert not twice.censored()
    # A quiet regular check ends it at once: the long checks are not all changed.
    assert not stats.observe(20_000.0, False).censored()
