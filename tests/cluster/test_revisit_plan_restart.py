"""A restarted master plans from the durable plan counts: real master and
worker processes crawl adaptive pages on a loopback server, the master is
stopped, and the next one reads revisit_plan_counts (not the schedule's rows)
and plans every domain in it before any page is fetched again."""

from __future__ import annotations

import signal
import sqlite3
from typing import Any

import pytest
from support.changing import PREFIX, ChangingPages

from nadird.master.state.revisit_counts import NO_CLASS, group_counts, read_counts
from nadird.testing.checks import master_cli as cli
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow

PAGES = [PREFIX, *(f"{PREFIX}p{i}" for i in range(5))]
ADAPTIVE = {"adaptive": {"min": "1m", "max": "7d", "initial": "1h"}}


def _schedule(cluster: Cluster) -> tuple[int, list[Any], list[Any]]:
    """Rows of the schedule, its counts and its GROUP BY (nothing before the
    master made the file)."""
    path = cluster.workdir / "state" / "frontier.db"
    if not path.exists():
        return 0, [], []
    with sqlite3.connect(path) as db:
        try:
            rows = int(db.execute("SELECT count(*) FROM revisits").fetchone()[0])
            counts, grouped = read_counts(db), group_counts(db)
        except sqlite3.OperationalError:  # the master is creating its tables
            rows, counts, grouped = 0, [], []
    db.close()
    return rows, counts, grouped


def _plans(cluster: Cluster) -> int:
    """The master's status revisit_plans (-1 while its API is not up yet)."""
    try:
        return int(cli(cluster, "status").get("revisit_plans", 0))
    except AssertionError:
        return -1


def test_a_restarted_master_plans_from_the_persisted_counts(cluster: Cluster) -> None:
    pages = ChangingPages()
    pages.set(PREFIX, "index", 0, links=PAGES[1:])
    for i, path in enumerate(PAGES[1:]):
        pages.set(path, f"item {i}", i)
    job = {"revisit": ADAPTIVE, "delay": 0.05, "links": {"scope": "same-domain"}}
    with run_in_thread() as web:
        web.add_route(PREFIX, pages.handle)
        seed = {"url": f"http://shop.test:{web.port}{PREFIX}", "job": "shop"}
        config = cluster.master_config(jobs={"shop": job}, seeds=[seed])
        master = cluster.start("master", "master", config)
        worker = cluster.start("worker", "w1", cluster.worker_config(1))
        assert wait_until(lambda: _schedule(cluster)[0] == len(PAGES), 30)
        master.kill(signal.SIGTERM)
        assert cluster.wait(master, 30) == 0
        worker.kill()
        cluster.wait(worker, 10)
        rows, counts, grouped = _schedule(cluster)
        assert sum(n for *_, n in counts) == rows == len(PAGES)
        assert set(counts) == set(grouped)
        # A group only the counts table has: a master that counted the rows
        # again would not plan it.
        with sqlite3.connect(cluster.workdir / "state" / "frontier.db") as db:
            db.execute(
                "INSERT INTO revisit_plan_counts VALUES ('ghost.test', 'shop', -1, ?, 7)",
                (NO_CLASS,),
            )
        db.close()
        again = cluster.start_again("master", cluster.workdir / "master.yaml")
        assert wait_until(lambda: _plans(cluster) == 2, 30)
        again.kill(signal.SIGTERM)
        assert cluster.wait(again, 30) == 0
    loaded = [e for e in again.logs() if e.get("event") == "revisit_plans_loaded"]
    assert loaded[-1]["domains"] == 2 and loaded[-1]["pages"] == len(PAGES) + 7
    assert not [e for e in again.logs() if e.get("event") == "revisit_plan_counts_built"]
