"""Calendar slots and `expire` end to end: real master and worker processes,
pages on a loopback server, fetches counted from its access log.

Cron has minute resolution and a downtime lasts what it lasts, so the cron
test shifts the master's revisit clock (NADIRD_REVISIT_CLOCK_START and
_OFFSET, master/revisits/clock.py) instead of waiting: the master starts ten
seconds before 09:00 in Shanghai (counted from when it has started, not from
when it was launched: starting takes seconds on a loaded machine), and is
restarted as if it had been down until 10:00:30. Everything else (processes,
sockets, bags, the store, the schedule's table in frontier.db) runs as in
production.
"""

from __future__ import annotations

import signal
import sqlite3
import time
from collections import Counter
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from support.changing import PREFIX, ChangingPages

from nadird.master.revisits.clock import OFFSET_ENV, START_ENV
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.web import SyntheticWeb, run_in_thread

pytestmark = pytest.mark.slow

SHANGHAI = ZoneInfo("Asia/Shanghai")
A, B = f"{PREFIX}a", f"{PREFIX}b"
ALL = [PREFIX, A, B]


def _fetches(web: SyntheticWeb) -> Counter[str]:
    return Counter(e.path for e in web.entries() if e.path.startswith(PREFIX))


def _at(hour: int, minute: int, second: int) -> float:
    return datetime(2026, 12, 2, hour, minute, second, tzinfo=SHANGHAI).timestamp()


def _offset_to(virtual: float) -> dict[str, str]:
    """The environment that makes the master's revisit clock read `virtual` now."""
    return {OFFSET_ENV: repr(virtual - time.time())}


def _start_master(cluster: Cluster, web: SyntheticWeb, job: dict[str, Any], **env: str) -> Any:
    job = {"links": {"scope": "same-domain"}, **job}
    seed = {"url": f"http://shop.test:{web.port}{PREFIX}", "job": "shop"}
    config = cluster.master_config(jobs={"shop": job}, seeds=[seed])
    return cluster.start("master", "master", config, env=env or None)


def _shifted_by(master: Any) -> float | None:
    """The revisit clock's offset the master logged at its start."""
    shifted = [e for e in master.logs() if e.get("event") == "revisit_clock_shifted"]
    return float(shifted[0]["offset"]) if shifted else None


def _next_due(cluster: Cluster) -> dict[str, float]:
    with sqlite3.connect(cluster.workdir / "state" / "frontier.db") as db:
        rows = db.execute("SELECT url, next_due FROM revisits").fetchall()
    return {url: due for url, due in rows}


def test_cron_in_shanghai_runs_its_slot_and_a_missed_slot_once(cluster: Cluster) -> None:
    pages = ChangingPages()
    pages.set(PREFIX, "index", 0, links=[A, B])
    pages.set(A, "Kettle", 299)
    pages.set(B, "Toaster", 45)
    # Every minute of 09:xx Shanghai time (01:xx UTC): read as UTC, the
    # first slot would be eight hours away and no page fetched twice.
    job = {"revisit": {"cron": "* 9 * * *", "timezone": "Asia/Shanghai"}}
    with run_in_thread() as web:
        web.add_route(PREFIX, pages.handle)
        start = {START_ENV: repr(_at(9, 0, 0) - 10.0)}
        master = _start_master(cluster, web, job, **start)
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert wait_until(lambda: _shifted_by(master) is not None, 60)
        slot = _at(9, 0, 0) - (_shifted_by(master) or 0.0)  # 09:00:00 on the system clock
        assert wait_until(lambda: min(_fetches(web)[p] for p in ALL) >= 1, slot - time.time())
        assert time.time() < slot, "the first fetches came after the slot"
        assert wait_until(lambda: min(_fetches(web)[p] for p in ALL) >= 2, 20)
        revisited = [e.t_start for e in web.entries() if e.path in ALL][3:]
        assert min(revisited) >= slot - 0.05  # at the slot, not before it
        master.kill(signal.SIGTERM)
        assert cluster.wait(master, 30) == 0
        after_slot = _fetches(web)
        # Down from 09:00 to 10:00:30: 60 slots missed, each URL due once.
        config_path = cluster.workdir / "master.yaml"
        cluster.start_again("master", config_path, env=_offset_to(_at(10, 0, 30)))
        assert wait_until(lambda: min(_fetches(web)[p] for p in ALL) >= 3, 20)
        time.sleep(2.0)  # ticks every 0.375 s: a replay of missed slots would show
        counts = _fetches(web)
        cluster.proc("master").kill(signal.SIGTERM)
        assert cluster.wait(cluster.proc("master"), 30) == 0
    assert after_slot == Counter({p: 2 for p in ALL}), after_slot
    assert counts == Counter({p: 3 for p in ALL}), counts
    # The next slot is the next day's 09:00 in Shanghai.
    tomorrow = datetime(2026, 12, 3, 9, 0, tzinfo=SHANGHAI).timestamp()
    assert set(_next_due(cluster).values()) == {tomorrow}


def test_expire_readmits_a_url_found_again_after_it(cluster: Cluster) -> None:
    """A chain index -> p1 -> p2 -> p3 -> p4 with half a second between
    fetches: p4 links back to /a, fetched more than `expire` (2 s) before,
    so /a is fetched again; p1 links to /b, fetched just before it, so /b is
    not. `expire` alone sets no schedule: the crawl then completes."""
    chain = [f"{PREFIX}p{i}" for i in range(1, 5)]
    pages = ChangingPages()
    pages.set(PREFIX, "index", 0, links=[A, B, chain[0]])
    pages.set(A, "Kettle", 299)
    pages.set(B, "Toaster", 45)
    for here, there in zip(chain, [*chain[1:], A], strict=True):
        pages.set(here, here, 1, links=[B, there] if here == chain[0] else [there])
    with run_in_thread() as web:
        web.add_route(PREFIX, pages.handle)
        job = {"expire": "2s", "delay": 0.5}
        master = _start_master(cluster, web, job)
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert cluster.wait(master, 60) == 0  # complete: nothing more is due
        counts = _fetches(web)
        fetched_at = {e.path: e.t_start for e in web.entries()}
    assert counts[A] == 2, counts
    assert all(counts[p] == 1 for p in [PREFIX, B, *chain]), counts
    assert fetched_at[A] > fetched_at[chain[-1]]  # after the link that found it
    # Checked once, and (no schedule) due again only when found again.
    with sqlite3.connect(cluster.workdir / "state" / "frontier.db") as db:
        checks = dict(db.execute("SELECT url, checks FROM revisits").fetchall())
        scheduled = db.execute("SELECT count(*) FROM revisits WHERE next_due IS NOT NULL")
        assert scheduled.fetchone()[0] == 0
    assert {url.split(PREFIX)[-1]: n for url, n in checks.items() if n} == {"a": 1}
