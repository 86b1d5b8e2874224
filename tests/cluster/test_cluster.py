"""One master and worker PROCESSES crawl the synthetic web; the server's access
log and the store say what really happened."""

from __future__ import annotations

import signal
from collections import Counter

import pytest

from nadird.testing.checks import (
    FIELDS,
    assert_exact_store,
    assert_one_worker_per_domain,
    expected_set,
    master_cli,
    page_requests,
    start_crawl,
)
from nadird.testing.cluster import Cluster, wait_until, worker_address
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow


def test_two_worker_processes_store_exactly_the_reachable_set(cluster: Cluster) -> None:
    # More hosts than the two workers' 16 bag slots, five bags a host.
    graph = SiteGraph(hosts=20, pages=100)
    # Latency makes a bag outlive the result flush interval, so a second lease
    # of a busy domain (the bug this guards against) would show as overlap.
    with run_in_thread(graph, latency=0.003) as web:
        master = start_crawl(cluster, graph)
        assert cluster.wait(master, 120) == 0
        entries = page_requests(web)
    assert_exact_store(cluster, graph)
    # From the server's side: every reachable URL fetched exactly once, nothing else.
    fetched = Counter(graph.canonical(f"http://{e.host}{e.path}") for e in entries)
    assert set(fetched) == set(expected_set(graph))
    assert max(fetched.values()) == 1
    assert {e.client for e in entries} == {worker_address(1), worker_address(2)}
    assert_one_worker_per_domain(entries)
    # Extraction rules (xpath, css with fallback, regex, attribute) on every page.
    for record in cluster.records():
        if record.content_type == "text/html" and "/p/" in record.url:
            want = graph.expected_fields(record.url)
            assert record.data == {k: want[k] for k in FIELDS}, record.url
    # The seen set was snapshotted at shutdown.
    assert (cluster.workdir / "state" / "seen.bloom").exists()


def test_kill_9_of_a_worker_mid_crawl_loses_nothing(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=8, pages=100)
    with run_in_thread(graph, latency=0.004) as web:
        master = start_crawl(cluster, graph)
        total = len(expected_set(graph))
        victim = worker_address(1)
        assert wait_until(lambda: sum(e.client == victim for e in web.entries()) > total // 5, 60)
        cluster.procs[1].kill(signal.SIGKILL)
        killed_at = web.entries()[-1].t_end
        assert cluster.wait(master, 120) == 0
        entries = page_requests(web)
    assert_exact_store(cluster, graph)
    after = [e for e in entries if e.t_start > killed_at + 0.5]
    assert after and all(e.client == worker_address(2) for e in after)
    assert_one_worker_per_domain(entries)
    stats = next(e for e in cluster.procs[0].logs() if e["event"] == "master_stopped")
    assert stats["leases_reclaimed"] >= 1


def test_garbage_on_the_sockets_is_dropped_and_counted(cluster: Cluster) -> None:
    import zmq

    graph = SiteGraph(hosts=3, pages=40)
    bad = [b"", b"\xc1", b"\x93\x01\x02\x03", b"\x81\xa1v\x01", b"\x82\xa1v\x01\xa1k\xa3bag"]
    with run_in_thread(graph, latency=0.002):
        # No worker yet: the crawl cannot end before the garbage is handled.
        master = start_crawl(cluster, graph, workers=0)
        ctx = zmq.Context()
        dealer = ctx.socket(zmq.DEALER)
        push = ctx.socket(zmq.PUSH)
        cluster.member(dealer, push)  # garbage from past the handshake
        dealer.connect(cluster.control)
        push.connect(cluster.results)
        for frame in bad:
            dealer.send(frame)
            push.send(frame)
        dealer.send_multipart([b"a", b"b"])
        expected = 2 * len(bad) + 1

        def all_dropped() -> bool:
            try:
                return bool(master_cli(cluster, "status").get("dropped_messages") == expected)
            except AssertionError:  # the API is not up yet
                return False

        assert wait_until(all_dropped, 60, interval=0.5)
        for sock in (dealer, push):
            sock.close(linger=2000)
        ctx.term()
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert cluster.wait(master, 120) == 0
    assert_exact_store(cluster, graph)
    stats = next(e for e in cluster.procs[0].logs() if e["event"] == "master_stopped")
    assert stats["dropped_messages"] == 2 * len(bad) + 1
