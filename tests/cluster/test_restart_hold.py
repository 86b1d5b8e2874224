"""After a restart, dispatch waits only as long as a lease of the previous run
could still be alive: not at all after a clean stop, until the old leases
would have expired after a crash."""

from __future__ import annotations

import signal
import sqlite3
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from nadird.common.urls import fingerprint
from nadird.config import Config, MasterConfig
from nadird.master.core import MasterCore
from nadird.master.frontier.seen import SeenSet
from nadird.master.leasing.lease_mark import KEY, LeaseMark, headroom_of, recovery_hold
from nadird.master.state.frontier_db import FrontierDB
from nadird.protocol.messages import Credit, Heartbeat, Hello
from nadird.testing.checks import (
    assert_exact_store,
    assert_one_worker_per_domain,
    page_requests,
    site_job,
)
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

TTL = 3.0
MASTER = {"lease_ttl": TTL, "heartbeat_interval": 0.25, "exit_when_done": False}


def stored_mark(path: Path) -> float | None:
    """leases_until as another connection sees it: only what was committed."""
    with sqlite3.connect(path) as db:
        row = db.execute("SELECT value FROM meta WHERE key=?", (KEY,)).fetchone()
    return None if row is None else float(row[0])


def test_hold_follows_the_stored_bound(tmp_path: Path) -> None:
    master = MasterConfig(lease_ttl=TTL, heartbeat_interval=0.5)
    longest = TTL + headroom_of(master) + master.heartbeat_interval
    db = FrontierDB(tmp_path / "frontier.db")
    now = time.monotonic()
    assert recovery_hold(db, master, queued=False, now=now) == 0.0
    assert recovery_hold(db, master, queued=True, now=now) == now + TTL  # no mark: a period
    mark = LeaseMark(db, TTL, headroom_of(master))
    mark.cover(now)
    assert recovery_hold(db, master, True, now) == pytest.approx(now + longest, abs=0.1)
    mark.settle(None, now)
    assert recovery_hold(db, master, True, now) == 0.0  # clean stop, nothing out
    mark.settle(now + 1.0, now)
    assert recovery_hold(db, master, True, now) == pytest.approx(now + 1.5, abs=0.1)  # + 0.5 beat
    db.set_meta(KEY, repr(time.time() + 3600))  # the wall clock was set back
    assert recovery_hold(db, master, True, now) == pytest.approx(now + longest, abs=0.1)
    grace = MasterConfig(lease_ttl=TTL, heartbeat_interval=0.5, recovery_grace=0.5)
    assert recovery_hold(db, grace, True, now) == now + 0.5
    db.close()


def test_the_bound_is_committed_before_a_bag_or_pong_leaves(tmp_path: Path) -> None:
    config = Config(master=MasterConfig(lease_ttl=TTL, heartbeat_interval=0.5))
    path = tmp_path / "frontier.db"
    core = MasterCore(config, FrontierDB(path), SeenSet(10_000, 0.01))
    urls = [f"http://a.test/{i}" for i in range(3)]
    core.admission.admit("default", urls, [fingerprint(u) for u in urls], 0)
    now = time.monotonic()
    core.on_control(b"w", Hello(node="w1", capacity=1, pid=1, version="0"), now)
    core.on_control(b"w", Credit(node="w1", bags=1), now)
    assert stored_mark(path) is None
    before = time.time()
    assert len(core.dispatch(now)) == 1
    first = stored_mark(path)
    assert first is not None and first >= before + TTL
    lease = next(iter(core.leases)).id
    later = now + TTL  # renewed a period later: the bound must move with it
    core.on_control(b"w", Heartbeat(node="w1", leases=[lease], seq=1), later)
    renewed = stored_mark(path)
    assert renewed is not None and renewed > first
    core.record_clean_stop(later)  # w1 is alive: it was told to drop its bags
    core.frontier.db.commit()
    assert stored_mark(path) == 0.0
    core.frontier.db.close()


def crawl_until_busy(cluster: Cluster, graph: SiteGraph, web: object) -> None:
    config = cluster.master_config(
        jobs=site_job(graph), seeds=graph.seeds(), master=MASTER, politeness={"delay": 0.05}
    )
    cluster.start("master", "master", config)
    for i in (1, 2):
        cluster.start("worker", f"w{i}", cluster.worker_config(i))
    assert wait_until(lambda: len(page_requests(web)) > 40, 30)  # type: ignore[arg-type]


def second_start(cluster: Cluster) -> dict[str, Any]:
    """master_started of the second run (both runs log to master.log)."""

    def starts() -> list[dict[str, Any]]:
        return [e for e in cluster.proc("master").logs() if e.get("event") == "master_started"]

    assert wait_until(lambda: len(starts()) == 2, 20)
    return starts()[1]


@pytest.mark.slow
def test_a_clean_stop_lets_the_next_run_dispatch_at_once(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=4, pages=100)
    with run_in_thread(graph, latency=0.005) as web:
        crawl_until_busy(cluster, graph, web)
        master = cluster.proc("master")
        master.kill(signal.SIGTERM)
        assert master.popen.wait(30) == 0
        assert wait_until(
            lambda: all(
                any(e.get("why") == "master stopping" for e in cluster.proc(w).logs())
                for w in ("w1", "w2")
            ),
            10,
        )
        time.sleep(0.5)
        restarted = time.time()
        cluster.start_again("master", cluster.workdir / "master.yaml", extra=["--exit-when-done"])
        started = second_start(cluster)
        assert started["hold"] == 0.0 and started["hold_ends"] is None
        assert wait_until(lambda: page_requests(web)[-1].t_start > restarted, 10)
        first = min(e.t_start for e in page_requests(web) if e.t_start > restarted)
        assert cluster.wait(cluster.proc("master"), 90) == 0
        entries = page_requests(web)
    # A held master would wait a whole period from its start; counted from
    # then, not from the spawn, which a busy machine can stretch by seconds.
    assert first - datetime.fromisoformat(started["ts"]).timestamp() < TTL
    assert_exact_store(cluster, graph)
    assert_one_worker_per_domain(entries)  # the dropped bags had stopped


@pytest.mark.slow
def test_after_a_crash_dispatch_waits_until_the_old_leases_expire(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=4, pages=100)
    with run_in_thread(graph, latency=0.005) as web:
        crawl_until_busy(cluster, graph, web)
        killed = time.time()
        cluster.proc("master").kill(signal.SIGKILL)
        time.sleep(1.5)
        cluster.start_again("master", cluster.workdir / "master.yaml", extra=["--exit-when-done"])
        started = second_start(cluster)
        hold = float(started["hold"])
        # Not ts + hold: on a busy machine the master may log only once the
        # hold is over (hold 0), seconds after the time it had computed.
        # No hold_ends at all: it started after the old leases had expired.
        ends = started["hold_ends"]
        resumes = datetime.fromisoformat(started["ts"]).timestamp() if ends is None else ends
        assert cluster.wait(cluster.proc("master"), 90) == 0
        entries = page_requests(web)
    # Leases were renewed up to the kill (heartbeats every 0.25 s): none of
    # them could have lived past killed + TTL, and the hold ends about then.
    config = MasterConfig(**MASTER)
    latest = killed + TTL + headroom_of(config) + config.heartbeat_interval + 0.3
    assert killed + TTL - 0.5 <= resumes
    assert ends is None or ends <= latest
    assert hold < TTL - 0.5  # a restart a second and a half later: not a whole period
    assert_exact_store(cluster, graph)
    assert_one_worker_per_domain(entries)
