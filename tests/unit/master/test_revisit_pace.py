"""A domain's revisit budget honours robots.txt Crawl-delay and
domain_concurrency (revisit_pace.py): the bound itself, the Crawl-delays the
master reads from robots notes (real SQLite), and the plan made again when
a note brings a new one."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import pytest
from support.core_helpers import T0, bags, make_core, register
from test_revisit_plan_master import ADAPTIVE, Clocks, _crawl_rounds, _revisits

from nadird.config import config_from_dict
from nadird.job.spec import Job
from nadird.master.leasing.robots_notes import RobotsNotes
from nadird.master.revisits.pace import PlanPace
from nadird.master.revisits.scheduler import Revisits
from nadird.protocol.messages import BagDone, RobotsNote


def _job(**fields: object) -> Job:
    config = config_from_dict({"jobs": {"shop": {"revisit": ADAPTIVE, **fields}}}, "t.yaml")
    return config.jobs["shop"]


def test_the_rate_bound_of_a_pace() -> None:
    pace = PlanPace()
    pace.politeness_delay = 2.0
    plain = _job()
    assert pace.rate("a.test", plain) == 0.5
    assert pace.rate("a.test", _job(delay=0.5)) == 2.0  # the job's delay first
    # Crawl-delay: the longest of the domain's origins, over the job's delay.
    pace.crawl_delays([("http://www.a.test", 4.0), ("https://a.test:8443", 5.0)])
    assert pace.rate("a.test", plain) == 0.2
    assert pace.rate("b.test", plain) == 0.5
    pace.crawl_delays([("https://a.test:8443", 500.0)])  # capped as the worker caps it
    assert pace.rate("a.test", plain) == pytest.approx(1 / 30)
    pace.crawl_delays([("http://www.a.test", 0.0), ("https://a.test:8443", 0.0)])
    assert pace.rate("a.test", plain) == 0.5


def test_concurrency_bounds_the_rate_through_the_fetch_time() -> None:
    pace = PlanPace()
    pace.politeness_delay = 1.0
    for _ in range(50):
        pace.observe("slow.test", 4.0)  # one lane: a start every 4 s, not every 1 s
    assert pace.rate("slow.test", _job()) == pytest.approx(0.25)
    # More lanes overlap slow fetches, but starts stay one delay apart.
    assert pace.rate("slow.test", _job(domain_concurrency=2)) == pytest.approx(0.5)
    assert pace.rate("slow.test", _job(domain_concurrency=8)) == 1.0
    pace.concurrency = 8  # politeness.domain_concurrency, when the job sets none
    assert pace.rate("slow.test", _job()) == 1.0
    # No delay at all: only concurrency over the fetch time bounds it.
    assert pace.rate("slow.test", _job(delay=0)) == pytest.approx(2.0)
    assert pace.rate("new.test", _job(delay=0)) == math.inf  # nothing known: no plan
    pace.observe("new.test", float("nan"))  # an unusable fetch time is no sample
    assert pace.rate("new.test", _job(delay=0)) == math.inf


def _spent(revisits: Revisits, domain: str) -> float:
    """Fetches per second the domain's plan hands out."""
    plan, counts = revisits.planner.plans[domain], revisits.planner.counts[domain]
    return sum(n / plan.intervals[key] for key, n in counts.items() if key in plan.intervals)


ROBOTS = "User-agent: *\nDisallow: /private\n\nUser-agent: nadird\nCrawl-delay: {}\n"


def test_a_robots_note_with_a_new_crawl_delay_replans_the_domain(tmp_path: Path) -> None:
    clocks = Clocks()
    revisits = _revisits(tmp_path / "f.db", clocks, ADAPTIVE, delay=10.0)  # 0.1 fetch/s
    notes = RobotsNotes(tmp_path / "robots.db", token="nadird")
    _crawl_rounds(revisits, clocks, 4)
    revisits.tick(60.0)
    assert _spent(revisits, "a.test") == pytest.approx(0.1, rel=1e-6)
    # A worker passes on a robots.txt asking nadird for 20 s between requests.
    delays = notes.remember([RobotsNote("http://a.test", False, ROBOTS.format(20), 0.0)])
    assert delays == {"http://a.test": 20.0}
    revisits.crawl_delays(delays.items())
    clocks.advance(61.0)
    assert revisits.planner.tick(60.0) == 1  # planned again without a page moving
    assert _spent(revisits, "a.test") == pytest.approx(1 / 20, rel=1e-6)
    # Other agents' delays do not count; a file without one gives the pace back.
    other = "User-agent: otherbot\nCrawl-delay: 99\n"
    revisits.crawl_delays(notes.remember([RobotsNote("http://a.test", False, other, 0.0)]).items())
    clocks.advance(61.0)
    assert revisits.planner.tick(60.0) == 1
    assert _spent(revisits, "a.test") == pytest.approx(0.1, rel=1e-6)
    notes.close()


def test_crawl_delays_are_read_back_from_the_notes_file(tmp_path: Path) -> None:
    path = tmp_path / "robots.db"
    notes = RobotsNotes(path, token="nadird")
    notes.remember(
        [
            RobotsNote("http://a.test", False, ROBOTS.format(7), 0.0),
            RobotsNote("http://b.test", False, "User-agent: *\nDisallow:\n", 0.0),
            RobotsNote("http://c.test", True, "", 0.0),
            RobotsNote("http://d.test", False, "User-agent: *\nRequest-rate: 1/20s\n", 0.0),
        ]
    )
    notes.close()
    again = RobotsNotes(path, token="nadird")
    assert sorted(again.delays()) == [("http://a.test", 7.0), ("http://d.test", 20.0)]
    plan = again._db.execute(
        "EXPLAIN QUERY PLAN SELECT origin, crawl_delay FROM robots WHERE crawl_delay > 0"
    ).fetchall()
    assert "robots_delay" in str(plan)  # the partial index: O(notes with a delay)
    again.close()


def test_a_notes_file_from_before_gains_the_delay_column(tmp_path: Path) -> None:
    path = tmp_path / "robots.db"
    with sqlite3.connect(path) as raw:
        raw.execute(
            "CREATE TABLE robots (origin TEXT PRIMARY KEY, allow_all INTEGER NOT NULL, "
            "text TEXT NOT NULL, fetched_at REAL NOT NULL)"
        )
        raw.execute("INSERT INTO robots VALUES ('http://a.test', 0, ?, 1.0)", (ROBOTS.format(3),))
    raw.close()
    notes = RobotsNotes(path, max_age=1e12, token="nadird")
    assert notes.delays() == []  # known once a worker passes the file on again
    assert [n.origin for n in notes.for_origins(["http://a.test"])] == ["http://a.test"]
    notes.remember([RobotsNote("http://a.test", False, ROBOTS.format(3), 0.0)])
    assert notes.delays() == [("http://a.test", 3.0)]
    notes.close()


def test_a_bag_done_with_a_robots_note_sets_the_domain_pace(tmp_path: Path) -> None:
    """The master's handling of BagDone: the note is kept and its Crawl-delay
    reaches the planner (a MasterCore without sockets, real SQLite)."""
    for core in make_core(tmp_path / "state"):
        core.robots = RobotsNotes(tmp_path / "state" / "robots.db", token="nadird")
        register(core, "w1")
        bag = bags(core)["a.test"]
        note = RobotsNote("http://a.test", False, ROBOTS.format(12), 0.0)
        done = BagDone(node="w1", lease=bag.lease, epoch=bag.epoch, returned=bag.fps, robots=[note])
        core.on_control(b"w1", done, T0 + 1.0)
        assert core.revisits.pace.crawl_delay("a.test") == 12.0
        assert core.revisits.pace.rate("a.test", Job()) == pytest.approx(1 / 12)
        assert core.robots.delays() == [("http://a.test", 12.0)]
        core.robots.close()
