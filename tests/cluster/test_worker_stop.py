"""A worker whose master is gone stops at once on SIGTERM or Ctrl-C: it used
to wait about ten seconds for results and a Bye nobody would read (its
sockets' linger), deaf to a second signal meanwhile. What it fetched
is not lost: the restarted master re-leases those URLs."""

from __future__ import annotations

import signal
import time

from nadird.testing.checks import assert_exact_store, page_requests, site_job
from nadird.testing.cluster import Cluster, Proc, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import SyntheticWeb, run_in_thread

TTL = 2.0  # the worker drops its bags 0.9 of it after the master's last word
DELAY = 0.2  # seconds between requests to a site: some are fetched after the kill
STOP_WITHIN = 2.0


def crawl_then_kill_the_master(cluster: Cluster, graph: SiteGraph, web: SyntheticWeb) -> Proc:
    """The worker `w1`, left with results fetched after its master died."""
    config = cluster.master_config(
        jobs=site_job(graph),
        seeds=graph.seeds(),
        master={"lease_ttl": TTL},
        politeness={"delay": DELAY},
    )
    master = cluster.start("master", "master", config)
    worker = cluster.start("worker", "w1", cluster.worker_config(1))
    assert wait_until(lambda: len(page_requests(web)) >= 3, 60)
    master.kill(signal.SIGKILL)
    master.popen.wait(10)
    killed = time.time()
    # A page fetched since, and its result sent (result_flush_interval).
    assert wait_until(lambda: page_requests(web)[-1].t_start > killed, 5)
    time.sleep(0.3)
    assert worker.popen.poll() is None
    return worker


def stop_time(worker: Proc, *signals: signal.Signals) -> float:
    start = time.monotonic()
    for sig in signals:
        worker.kill(sig)
        time.sleep(0.1)
    worker.popen.wait(30)
    return time.monotonic() - start


def test_sigterm_stops_a_worker_whose_master_is_gone_and_no_page_is_lost(
    cluster: Cluster,
) -> None:
    graph = SiteGraph(hosts=2, pages=15)
    with run_in_thread(graph, latency=0.002) as web:
        worker = crawl_then_kill_the_master(cluster, graph, web)
        took = stop_time(worker, signal.SIGTERM)
        assert worker.popen.returncode == 0
        assert took < STOP_WITHIN, took
        stopped = [e for e in worker.logs() if e.get("event") == "worker_stopped"]
        assert stopped and stopped[0]["master_gone"] is True
        # The results it could not send: their URLs are leased again.
        master = cluster.start_again("master", cluster.workdir / "master.yaml")
        cluster.start("worker", "w2", cluster.worker_config(2))
        assert cluster.wait(master, 120) == 0
    assert_exact_store(cluster, graph)


def test_ctrl_c_twice_ends_a_worker_whose_master_is_gone_at_once(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=2, pages=15)
    with run_in_thread(graph, latency=0.002) as web:
        worker = crawl_then_kill_the_master(cluster, graph, web)
        took = stop_time(worker, signal.SIGINT, signal.SIGINT)
    # Stopped by the first (0), ended by the second while stopping (1), or
    # by the second once the event loop had closed (Python's own SIGINT).
    assert worker.popen.returncode in (0, 1, -signal.SIGINT)
    assert took < STOP_WITHIN, took
