"""Budget allocation for freshness: optimal, inverted U, exact budget, fast."""

from __future__ import annotations

import math
import random
import time
from itertools import pairwise

import pytest

from nadird.revisit.allocate import (
    allocate,
    domain_budget,
    expected_freshness,
    freshness,
    phi_inverse,
)

DAY = 86400.0


def total_freshness(rates: list[float], frequencies: list[float]) -> float:
    return sum(freshness(r, 1.0 / f) for r, f in zip(rates, frequencies, strict=True))


def brute_force_two(rates: list[float], budget: float, low: float, high: float) -> float:
    start, stop = max(low, budget - high), min(high, budget - low)
    steps = 20000
    best = 0.0
    for k in range(steps + 1):
        f1 = start + (stop - start) * k / steps
        best = max(best, total_freshness(rates, [f1, budget - f1]))
    return best


def brute_force_three(rates: list[float], budget: float, low: float, high: float) -> float:
    steps = 400
    best = 0.0
    for i in range(steps + 1):
        f1 = low + (high - low) * i / steps
        for j in range(steps + 1):
            f2 = low + (high - low) * j / steps
            f3 = budget - f1 - f2
            if low <= f3 <= high:
                best = max(best, total_freshness(rates, [f1, f2, f3]))
    return best


@pytest.mark.parametrize(
    ("rates", "budget"),
    [
        ([1 / 3600, 1 / 60], 1 / 600),
        ([1 / 3600, 1 / (7 * DAY)], 1 / 1800),
        ([1 / 100, 1 / 50], 1 / 3000),
        ([0.0, 1 / 3600], 1 / 1200),
    ],
)
def test_two_pages_match_brute_force(rates: list[float], budget: float) -> None:
    low, high = 1 / (30 * DAY), 1 / 60
    result = allocate(rates, budget, (60, 30 * DAY), classes_per_decade=None)
    got = total_freshness(rates, [1 / i for i in result.intervals])
    assert got >= brute_force_two(rates, budget, low, high) - 1e-6
    assert result.spent == pytest.approx(budget, rel=1e-12)


def test_three_pages_match_brute_force() -> None:
    rates = [1 / 7200, 1 / 900, 1 / 86400]
    low, high = 1 / DAY, 1 / 300
    budget = 1 / 1000
    result = allocate(rates, budget, (300, DAY), classes_per_decade=None)
    got = total_freshness(rates, [1 / i for i in result.intervals])
    assert got >= brute_force_three(rates, budget, low, high) - 1e-6


def test_inverted_u_fast_changers_get_the_least() -> None:
    rates = [10 ** (-6 + k / 10) for k in range(51)]  # 1e-6 .. 1e-1 changes per second
    result = allocate(rates, 1 / 600, (1.0, 100 * DAY), classes_per_decade=None)
    freq = [1 / i for i in result.intervals]
    peak = freq.index(max(freq))
    assert 0 < peak < len(freq) - 1
    assert all(a <= b + 1e-15 for a, b in pairwise(freq[: peak + 1]))
    assert all(a >= b - 1e-15 for a, b in pairwise(freq[peak:]))
    assert result.intervals[-1] == pytest.approx(100 * DAY)  # not worth chasing at all
    assert result.intervals[-1] > result.intervals[peak] * 100


def test_budget_is_spent_exactly_and_bounds_hold() -> None:
    rng = random.Random(4)
    rates = [10 ** rng.uniform(-7, -2) for _ in range(3000)]
    for budget in (0.01, 0.1, 0.5):
        result = allocate(rates, budget, (60, 14 * DAY))
        spent = sum(1 / i for i in result.intervals)
        assert spent == pytest.approx(budget, rel=1e-9)
        assert all(60 * (1 - 1e-12) <= i <= 14 * DAY * (1 + 1e-12) for i in result.intervals)


def test_rate_classes_lose_almost_nothing_against_the_exact_solution() -> None:
    rng = random.Random(8)
    rates = [10 ** rng.uniform(-7, -2) for _ in range(2000)]
    bounds = (300, 14 * DAY)
    exact = allocate(rates, 0.05, bounds, classes_per_decade=None)
    classed = allocate(rates, 0.05, bounds)
    f_exact = expected_freshness(rates, exact.intervals)
    f_classed = expected_freshness(rates, classed.intervals)
    assert f_classed <= f_exact + 1e-9
    assert f_exact - f_classed < 1e-4


def test_optimal_beats_uniform_and_proportional_refresh() -> None:
    rng = random.Random(6)
    rates = [10 ** rng.uniform(-6, -2) for _ in range(2000)]
    budget = 0.2
    best = expected_freshness(rates, allocate(rates, budget, (1, 365 * DAY)).intervals)
    uniform = expected_freshness(rates, [len(rates) / budget] * len(rates))
    total_rate = sum(rates)
    proportional = expected_freshness(rates, [total_rate / (budget * r) for r in rates])
    assert best > uniform > proportional


def test_per_page_bounds() -> None:
    rates = [1 / 600, 1 / 600]
    result = allocate(rates, 1 / 60, (1, DAY), page_bounds=[(3600, DAY), (1, DAY)])
    assert result.intervals[0] == pytest.approx(3600)
    assert 1 / result.intervals[0] + 1 / result.intervals[1] == pytest.approx(1 / 60)


def test_too_small_a_budget_stretches_every_interval_alike() -> None:
    result = allocate([1 / 60, 1 / 3600, 0.0], 3 / (2 * DAY), (60, DAY))
    assert result.intervals == pytest.approx([2 * DAY] * 3)
    assert result.spent == pytest.approx(3 / (2 * DAY))


def test_too_large_a_budget_refreshes_at_the_min_interval() -> None:
    result = allocate([1 / 60, 1 / 3600], 10.0, (60, DAY))
    assert result.intervals == pytest.approx([60, 60])
    assert result.spent == pytest.approx(2 / 60)
    assert allocate([0.0, 0.0], 1.0, (60, DAY)).intervals == [DAY, DAY]


def test_domain_budget_and_freshness_formula() -> None:
    assert domain_budget(2.0) == 0.5
    assert domain_budget(2.0, first_fetches=0.2) == pytest.approx(0.3)
    assert domain_budget(1.0, first_fetches=5.0) == 0.0
    with pytest.raises(ValueError):
        domain_budget(0.0)
    assert freshness(0.0, DAY) == 1.0
    assert freshness(1 / 3600, 3600) == pytest.approx(1 - 1 / 2.718281828459045)
    for y in (1e-12, 1e-4, 0.3, 0.9, 0.999999):
        x = phi_inverse(y)
        assert -math.expm1(-x) - x * math.exp(-x) == pytest.approx(y, rel=1e-6)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError):
        allocate([1.0], 0.0, (1, 2))
    with pytest.raises(ValueError):
        allocate([-1.0], 1.0, (1, 2))
    with pytest.raises(ValueError):
        allocate([1.0], 1.0, (2, 1))


def test_speed_of_100000_pages(capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(1)
    rates = [10 ** rng.uniform(-8, -1) for _ in range(100_000)]
    started = time.perf_counter()
    result = allocate(rates, 0.5, (300, 14 * DAY))
    elapsed = time.perf_counter() - started
    assert len(result.intervals) == 100_000
    assert sum(1 / i for i in result.intervals) == pytest.approx(0.5, rel=1e-9)
    with capsys.disabled():
        print(f"\nallocate: 100,000 pages in {elapsed:.3f} s")
