"""After a restart, dispatch waits only as long as a lease of the previous run
could still be alive: not at all after a clean stop, until the old leases
would have expired after a crash."""

from __future__ import annotations

import signal
import time
from datetime import datetime
from typing import Any

import pytest
from support.restart_hold_helpers import TTL

from nadird.config import MasterConfig
from nadird.master.leasing.lease_mark import headroom_of
from nadird.testing.checks import (
    assert_exact_store,
    assert_one_worker_per_domain,
    page_requests,
    site_job,
)
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

MASTER = {"lease_ttl": TTL, "heartbeat_interval": 0.25, "exit_when_done": False}


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
