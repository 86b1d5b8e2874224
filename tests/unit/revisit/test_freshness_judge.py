"""The freshness judge on hand-built cases, and its optimal-allocation reference."""

from __future__ import annotations

import pytest

from nadird.revisit.allocate import freshness
from nadird.testing import judge
from nadird.testing.judge import Fetch, Report


def test_staleness_on_a_hand_built_example() -> None:
    truth = {0: [10.0], 1: []}
    fetches = [Fetch(0, 0.0, 0), Fetch(0, 20.0, 1)]  # page 1 is never fetched
    result = judge.staleness(truth, fetches, 0.0, 30.0)
    # Page 0 is fresh for 20 s of 30, aged t − 10 on [10, 20); page 1 aged t all along.
    assert result.freshness == pytest.approx(20 / 60)
    assert result.mean_age == pytest.approx((50 + 450) / 60)
    assert judge.staleness(truth, fetches, 20.0, 30.0, pages=[0]).freshness == 1.0


def test_false_and_missed_changes_on_a_hand_built_example() -> None:
    truth = {0: [10.0, 20.0, 30.0, 40.0], 1: [], 2: [10.0, 20.0]}
    fetches = [
        *(Fetch(0, t, v) for t, v in ((0, 0), (5, 0), (12, 1), (15, 1), (35, 3))),
        Fetch(1, 0.0, 0),
        Fetch(1, 50.0, 0),
        *(Fetch(2, t, v) for t, v in ((0, 0), (15, 1), (25, 2))),
    ]
    reports = [
        Report(0, 5.0),  # false: nothing changed (noise)
        Report(0, 12.0),  # detects change 1
        Report(0, 13.0),  # false: the fetch at 12 again
        Report(0, 15.0),  # false: same version as at 12
        Report(0, 35.0),  # detects change 3; change 2 (20 to 30) was never fetched: missed
        Report(1, 0.0),  # false: a first fetch is no change
        Report(1, 50.0),  # false
        Report(2, 25.0),  # detects change 2; change 1 was fetched at 15, unreported: missed
    ]
    # Page 0's change 4 (at 40) is still live at the end: pending, not missed.
    assert judge.change_account(truth, fetches, reports, 0.0, 60.0) == judge.ChangeAccount(
        changes=6, detected=3, missed=2, missed_unfetched=1, reports=8, false=5
    )
    assert judge.change_account(truth, fetches, reports, 15.0, 60.0) == judge.ChangeAccount(
        changes=4, detected=2, missed=1, missed_unfetched=1, reports=4, false=2
    )


def test_optimal_allocation_against_brute_force_and_the_inverted_u() -> None:
    # Two pages, the budget split on a fine grid: the optimum is as good as the best split.
    rates, budget = [1 / 60, 1 / 3600], 1 / 300
    best_split = (
        max(
            freshness(rates[0], 1 / (budget * s)) + freshness(rates[1], 1 / (budget * (1 - s)))
            for s in (i / 1000 for i in range(1, 1000))
        )
        / 2
    )
    reference = judge.optimal_freshness(rates, budget)
    assert reference.freshness == pytest.approx(best_split, abs=1e-4)
    assert sum(1 / i for i in reference.intervals) == pytest.approx(budget, rel=1e-6)
    # Equal rates: the even split. Far too fast a page: given up for the others.
    even = judge.optimal_freshness([1 / 600] * 4, 4 / 600)
    assert even.intervals == pytest.approx([600.0] * 4)
    assert even.freshness == pytest.approx(freshness(1 / 600, 600))
    spread = judge.optimal_freshness([1.0, 1 / 600, 1 / 3600, 0.0], 1 / 300)
    assert spread.intervals[0] == spread.intervals[3] == judge.UNBOUNDED[1]
    assert spread.intervals[1] < spread.intervals[2]
    with pytest.raises(ValueError, match="budget"):
        judge.optimal_freshness([1.0], 0.0)
