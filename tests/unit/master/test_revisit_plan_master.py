"""The master's revisit plans, ETag health, lateness and clock guard, on a
real frontier.db and fake clocks."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from nadird.common.urls import fingerprint
from nadird.config import config_from_dict
from nadird.master.frontier.queues import Frontier
from nadird.master.revisits.etag_health import BROKEN_AFTER
from nadird.master.revisits.plan import ROUND_BUDGET
from nadird.master.revisits.scheduler import Revisits
from nadird.master.state.frontier_db import FrontierDB
from nadird.protocol.messages import PageResult
from nadird.revisit.plan import class_interval
from nadird.revisit.policy import Adaptive
from nadird.revisit.schedule import MAX_GROWTH

HOUR = 3600.0
ADAPTIVE = {"adaptive": {"min": "1m", "max": "7d", "initial": "1h"}}


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Clocks:
    """A wall clock and a monotonic one, moved together unless told otherwise."""

    def __init__(self) -> None:
        self.wall = Clock(1_800_000_000.0)
        self.mono = Clock(1000.0)

    def advance(self, seconds: float) -> None:
        self.wall.advance(seconds)
        self.mono.advance(seconds)


def _revisits(path: Path, clocks: Clocks, revisit: object, delay: float = 10.0) -> Revisits:
    jobs = config_from_dict({"jobs": {"shop": {"revisit": revisit}}}, "t.yaml").jobs
    db = FrontierDB(path)
    revisits = Revisits(db.revisits, Frontier(db), dict(jobs), wall=clocks.wall, clock=clocks.mono)
    revisits.pace.politeness_delay = delay
    return revisits


def _page(url: str, signature: str, status: int = 200, etag: str = "", lm: str = "") -> PageResult:
    return PageResult(
        url=url,
        fp=fingerprint(url),
        final_url=url,
        status=status,
        fetched_at=0.0,
        depth=1,
        signature=signature,
        etag=etag,
        last_modified=lm,
    )


def _fetch(revisits: Revisits, page: PageResult) -> None:
    revisits.on_page(page, "shop")
    revisits.settle([page.fp])


FAST = [f"http://a.test/fast{i}" for i in range(10)]
QUIET = [f"http://a.test/quiet{i}" for i in range(30)]


def _crawl_rounds(revisits: Revisits, clocks: Clocks, rounds: int) -> None:
    """Every page fetched once an hour: the fast ones changed each time."""
    for n in range(rounds):
        for url in FAST:
            _fetch(revisits, _page(url, f"v{n}"))
        for url in QUIET:
            _fetch(revisits, _page(url, "same"))
        clocks.advance(HOUR)


def test_each_domain_budget_is_shared_by_the_allocation_and_used_for_due_times(
    tmp_path: Path,
) -> None:
    clocks = Clocks()
    revisits = _revisits(tmp_path / "f.db", clocks, ADAPTIVE, delay=10.0)  # 0.1 fetch/s
    _crawl_rounds(revisits, clocks, 6)
    planner = revisits.planner
    revisits.tick(60.0)  # queues what is due and plans the changed domain
    assert planner.rounds == 1 and planner.planned == 1
    plan = planner.plans["a.test"]
    counts = planner.counts["a.test"]
    assert sum(counts.values()) == len(FAST) + len(QUIET)
    # The domain's whole budget, 1/delay, split among its groups.
    spent = sum(n / plan.intervals[key] for key, n in counts.items())
    assert spent == pytest.approx(0.1, rel=1e-6)
    # The fast pages get a shorter interval than the quiet ones.
    fast_key = ("shop", -1, revisits.table.get(fingerprint(FAST[0])).plan_class)  # type: ignore[union-attr]
    quiet_key = ("shop", -1, revisits.table.get(fingerprint(QUIET[0])).plan_class)  # type: ignore[union-attr]
    assert plan.intervals[fast_key] < plan.intervals[quiet_key]
    # A fetch now takes its group's interval (at most doubling the last one);
    # a class the plan did not solve gets the interval the plan's μ gives it.
    _fetch(revisits, _page(QUIET[0], "same"))
    entry = revisits.table.get(fingerprint(QUIET[0]))
    assert entry is not None and entry.next_due is not None
    schedule = revisits.jobs["shop"].revisit_policy().default  # type: ignore[union-attr]
    assert isinstance(schedule, Adaptive)
    key = ("shop", -1, entry.plan_class)
    allocated = revisits.planner.lookup("a.test", key, schedule)[0]
    assert allocated is not None
    if key not in plan.intervals:
        assert entry.plan_class is not None
        mine = class_interval(plan.mu, entry.plan_class, schedule)
        assert allocated == mine
    expected = min(allocated, MAX_GROWTH * HOUR)
    assert entry.next_due - entry.last_fetch == pytest.approx(expected)
    # The next round waits for the interval, and plans only domains that moved.
    assert planner.tick(60.0) == 0
    clocks.advance(61.0)
    assert planner.tick(60.0) == 1 and planner.rounds == 2


def test_first_fetches_are_taken_off_the_budget(tmp_path: Path) -> None:
    clocks = Clocks()
    revisits = _revisits(tmp_path / "f.db", clocks, ADAPTIVE, delay=10.0)
    _crawl_rounds(revisits, clocks, 4)
    revisits.tick(60.0)
    clocks.advance(100.0)
    for i in range(5):  # 5 new pages in 100 s: 0.05/s of the 0.1/s
        _fetch(revisits, _page(f"http://a.test/new{i}", "n"))
    revisits.tick(60.0)
    plan, counts = revisits.planner.plans["a.test"], revisits.planner.counts["a.test"]
    known = sum(n / plan.intervals[key] for key, n in counts.items() if key in plan.intervals)
    unknown = sum(n for key, n in counts.items() if key[2] is None)
    assert unknown == 5
    assert known == pytest.approx(0.1 - 0.05 - 5 / HOUR, rel=1e-6)


def test_plan_counts_are_loaded_again_after_a_restart(tmp_path: Path) -> None:
    clocks = Clocks()
    revisits = _revisits(tmp_path / "f.db", clocks, ADAPTIVE)
    _crawl_rounds(revisits, clocks, 3)
    counts = dict(revisits.planner.counts["a.test"])
    revisits.table._db.commit()
    again = _revisits(tmp_path / "f.db", clocks, ADAPTIVE)
    assert dict(again.planner.counts["a.test"]) == counts
    # A fixed schedule puts no page in a plan.
    fixed = _revisits(tmp_path / "g.db", clocks, {"every": "1h"})
    _fetch(fixed, _page("http://b.test/x", "s"))
    assert not fixed.planner.counts.get("b.test")


def test_a_schedule_table_from_before_plans_gains_their_columns(tmp_path: Path) -> None:
    clocks = Clocks()
    revisits = _revisits(tmp_path / "f.db", clocks, ADAPTIVE)
    _fetch(revisits, _page(FAST[0], "s"))
    revisits.table._db.commit()
    revisits.table._db.close()
    with sqlite3.connect(tmp_path / "f.db") as raw:  # nor had their counts
        raw.executescript(
            "DROP TRIGGER revisit_counts_insert; DROP TRIGGER revisit_counts_delete; "
            "DROP TRIGGER revisit_counts_update; DROP TABLE revisit_plan_counts;"
        )
        raw.execute("ALTER TABLE revisits DROP COLUMN plan_rule")
        raw.execute("ALTER TABLE revisits DROP COLUMN plan_class")
    again = _revisits(tmp_path / "f.db", clocks, ADAPTIVE)
    entry = again.table.get(fingerprint(FAST[0]))
    assert entry is not None and entry.plan_rule is None  # kept, planned at its next fetch
    assert not again.planner.counts
    clocks.advance(HOUR)
    _fetch(again, _page(FAST[0], "t"))
    entry = again.table.get(fingerprint(FAST[0]))
    assert entry is not None and entry.plan_rule == -1 and entry.plan_class is not None


def test_planning_many_domains_is_sliced_over_ticks(tmp_path: Path) -> None:
    clocks = Clocks()
    revisits = _revisits(tmp_path / "f.db", clocks, ADAPTIVE)
    for d in range(300):
        _fetch(revisits, _page(f"http://d{d}.test/", "s"))
    planner = revisits.planner
    slow = Clock(clocks.mono.now)

    def reading() -> float:  # every reading a whole slice later
        slow.now += ROUND_BUDGET
        return slow.now

    planner._clock = reading
    assert planner.tick(60.0) == 1  # one domain at least, then the tick ends
    assert len(planner.plans) + len(planner._work) >= 299


def test_a_host_whose_etag_never_gives_a_304_gets_if_modified_since_only(
    tmp_path: Path,
) -> None:
    clocks = Clocks()
    revisits = _revisits(tmp_path / "f.db", clocks, {"every": "1h"})
    lm = "Tue, 01 Dec 2026 10:00:00 GMT"
    rotating = [f"http://rot.test/{i}" for i in range(3)]
    good = "http://good.test/a"
    for n in range(BROKEN_AFTER // 3 + 2):
        for url in rotating:
            _fetch(revisits, _page(url, "same", etag=f'"{n}"', lm=lm))
        _fetch(revisits, _page(good, "same", etag='"g"', lm=lm))
        clocks.advance(HOUR)
    _fetch(revisits, _page(good, "", status=304))
    fps = [fingerprint(u) for u in [*rotating, good]]
    pairs = revisits.validators("shop", fps)
    assert [p[0] for p in pairs[:3]] == ["", "", ""] and {p[1] for p in pairs[:3]} == {lm}
    assert pairs[3] == ['"g"', lm]
    status = revisits.status()
    assert status["revisit_etag_ignored_hosts"] == 1 and status["revisit_etag_withheld"] == 3
    # A host that answers 304 is trusted for good, even if some pages then fail.
    for n in range(2 * BROKEN_AFTER):
        _fetch(revisits, _page(good, "same", etag=f'"x{n}"', lm=lm))
    assert revisits.validators("shop", [fingerprint(good)])[0][0] != ""


def test_lateness_is_a_histogram_and_a_summary(tmp_path: Path) -> None:
    clocks = Clocks()
    revisits = _revisits(tmp_path / "f.db", clocks, {"every": "1h"})
    urls = [f"http://a.test/{i}" for i in range(20)]
    for url in urls:
        _fetch(revisits, _page(url, "s"))
    clocks.advance(HOUR)
    assert revisits.scan() == 20
    for url in urls:  # fetched 0, 1, ..., 19 s after due
        _fetch(revisits, _page(url, "s"))
        clocks.advance(1.0)
    status = revisits.status()
    assert status["revisit_lateness_p50"] == 10.0 and status["revisit_lateness_p95"] == 19.0
    registry = CollectorRegistry()
    registry.register(revisits.lateness)
    families = text_string_to_metric_families(generate_latest(registry).decode())
    samples = {(s.name, s.labels.get("le")): s.value for f in families for s in f.samples}
    assert samples["nadird_revisit_lateness_seconds_count", None] == 20
    assert samples["nadird_revisit_lateness_seconds_sum", None] == sum(range(20))
    assert samples["nadird_revisit_lateness_seconds_bucket", "5.0"] == 6
    assert revisits.lateness._counts[-1] == 0  # nothing beyond the last bound (a day)
    # A first fetch is no revisit: it adds nothing.
    _fetch(revisits, _page("http://a.test/new", "s"))
    assert revisits.status()["revisit_lateness_p95"] == 19.0


def test_a_clock_set_back_neither_stalls_nor_bursts(tmp_path: Path) -> None:
    clocks = Clocks()
    revisits = _revisits(tmp_path / "f.db", clocks, {"every": "1h"})
    urls = [f"http://a.test/{i}" for i in range(10)]
    for url in urls:
        _fetch(revisits, _page(url, "s"))
    clocks.advance(HOUR)
    clocks.wall.advance(-86400.0)  # set back a day
    assert revisits.scan() == 10  # still due: no day-long stall
    for url in urls:
        _fetch(revisits, _page(url, "s"))
    assert revisits.scan() == 0  # not due again at once: no burst
    clocks.advance(HOUR - 1)
    assert revisits.scan() == 0
    clocks.advance(2)
    assert revisits.scan() == 10  # an hour later by the monotonic clock
    # A clock set forward is followed; the per-scan limit spreads what it makes due.
    entry = revisits.table.get(fingerprint(urls[0]))
    assert entry is not None and entry.last_fetch == pytest.approx(1_800_000_000.0 + HOUR)
