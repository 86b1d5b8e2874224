"""Registration after restarts: a worker restarted under its name is welcomed
at once, and a worker registers once with a restarted master."""

from __future__ import annotations

import signal
import time

import pytest

from nadird.testing.checks import page_requests, start_crawl
from nadird.testing.cluster import Cluster, Proc, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow

HEARTBEAT = 10.0  # master.heartbeat_interval of the first test


def events(proc: Proc, name: str) -> list[dict[str, object]]:
    return [e for e in proc.logs() if e.get("event") == name]


def test_a_worker_killed_and_started_again_takes_its_name_back_at_once(
    cluster: Cluster,
) -> None:
    # A worker counts as live for two heartbeat intervals after its last
    # heartbeat, so for one interval at least after the kill (10 s here):
    # longer than its restart takes (5.7 s seen on a loaded machine, where
    # a 2 s interval made the bound below fail), so only its closed
    # connection lets it back in.
    graph = SiteGraph(hosts=4, pages=400)
    master_settings = {"heartbeat_interval": HEARTBEAT, "lease_ttl": 3 * HEARTBEAT}
    with run_in_thread(graph, latency=0.02) as web:
        master = start_crawl(cluster, graph, workers=1, master=master_settings)
        assert wait_until(lambda: events(master, "worker_joined"), 30)
        # Crawling: the old process holds bags when it is killed.
        assert wait_until(lambda: len(page_requests(web)) > 10, 30)
        old = cluster.proc("w1")
        old.kill(signal.SIGKILL)
        old.popen.wait(10)
        killed = time.monotonic()
        new = cluster.start_again("w1", cluster.workdir / "w1.yaml", role="worker")
        pid = new.popen.pid
        assert wait_until(lambda: any(e["pid"] == pid for e in events(master, "worker_joined")), 30)
        waited = time.monotonic() - killed
    assert events(master, "worker_refused") == []
    assert waited < HEARTBEAT  # while the old registration still counted as live
    # Its old process's bags were taken back when the new one came in.
    assert any(e["why"] == "worker restarted" for e in events(master, "lease_reclaimed"))


def test_a_worker_registers_once_with_a_restarted_master(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=4, pages=400)
    with run_in_thread(graph, latency=0.02):
        master = start_crawl(cluster, graph, workers=1)
        worker = cluster.proc("w1")
        assert wait_until(lambda: events(worker, "worker_registered"), 30)
        master.kill(signal.SIGKILL)
        master.popen.wait(10)
        # Heartbeats (and, once the worker gave its leases up, hellos) queue
        # up for the master that is gone: each gets an answer from the next.
        time.sleep(2.0)
        master = cluster.start_again("master", cluster.workdir / "master.yaml")
        assert wait_until(lambda: len(events(worker, "worker_registered")) >= 2, 30)
        time.sleep(2.0)  # answers to what was queued have come by now
    assert len(events(worker, "worker_registered")) == 2  # once per master run
    assert len(events(master, "worker_joined")) == 2
