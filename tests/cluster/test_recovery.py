"""Nothing lost, nothing twice: master and worker crashes, stalls, retries."""

from __future__ import annotations

import json
import random
import signal
import sys
import time

import pytest
from support.flaky import FlakyRoutes

from nadird.testing import forkserver
from nadird.testing.checks import (
    assert_exact_store,
    assert_one_worker_per_domain,
    expected_set,
    last_event,
    page_requests,
    site_job,
    start_crawl,
)
from nadird.testing.cluster import Cluster, wait_until, worker_address
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow


def test_master_killed_three_times_resumes_and_stores_exactly_once(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=20, pages=300)
    total = len(expected_set(graph))
    assert total >= 5000
    rng = random.Random(7)
    with run_in_thread(graph, latency=0.002) as web:
        master = start_crawl(cluster, graph, master={"snapshot_interval": 1.0})
        config_path = cluster.workdir / "master.yaml"
        for point in sorted(rng.uniform(0.15, 0.8) for _ in range(3)):
            assert wait_until(lambda p=point: len(page_requests(web)) > p * total, 90)
            master.kill(signal.SIGKILL)
            master.popen.wait(10)
            master = cluster.start_again("master", config_path)
        assert cluster.wait(master, 180) == 0
        entries = page_requests(web)
    assert_exact_store(cluster, graph)
    assert_one_worker_per_domain(entries)
    done = last_event(cluster, "master", "crawl_complete")
    assert done["queued"] == 0 and done["leases"] == 0
    for name in ("w1", "w2"):  # the workers reconnected by themselves
        assert cluster.proc(name).popen.wait(30) == 0


def test_workers_killed_repeatedly_lose_nothing(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=10, pages=200)
    total = len(expected_set(graph))
    with run_in_thread(graph, latency=0.002) as web:
        master = start_crawl(cluster, graph)
        for round_, point in enumerate((0.15, 0.3, 0.45, 0.6)):
            name = f"w{round_ % 2 + 1}"
            assert wait_until(lambda p=point: len(page_requests(web)) > p * total, 90)
            victim = cluster.proc(name)
            victim.kill(signal.SIGKILL)
            victim.popen.wait(10)
            # Restarted under the same node name: its old leases come back at once.
            cluster.start_again(name, cluster.workdir / f"{name}.yaml", role="worker")
        assert cluster.wait(master, 180) == 0
        entries = page_requests(web)
    assert_exact_store(cluster, graph)
    assert_one_worker_per_domain(entries)
    assert last_event(cluster, "master", "master_stopped")["leases_reclaimed"] >= 1


def test_stalled_worker_is_fenced_and_its_late_results_are_stored_once(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=6, pages=200)
    total = len(expected_set(graph))
    with run_in_thread(graph, latency=0.003) as web:
        master = start_crawl(cluster, graph)

        def w1_at_work() -> bool:
            # w1 fetching, not still waiting for the master's keys: a worker
            # stopped before it holds a bag has nothing to be fenced from.
            entries = page_requests(web)
            by_w1 = [e for e in entries if e.client == worker_address(1)]
            return len(by_w1) >= 10 and len(entries) > 0.2 * total

        assert wait_until(w1_at_work, 60)
        stalled = cluster.proc("w1")
        stalled.kill(signal.SIGSTOP)
        # Well past lease expiry: its bags go to w2 meanwhile.
        time.sleep(3.5)
        stalled.kill(signal.SIGCONT)
        assert cluster.wait(master, 120) == 0
        entries = page_requests(web)
    assert_exact_store(cluster, graph)
    assert_one_worker_per_domain(entries)
    assert any(e.get("event") == "bags_dropped" for e in stalled.logs())
    assert last_event(cluster, "master", "master_stopped")["leases_expired"] >= 1


def test_retries_then_dead_letters_then_retry_once_fixed(cluster: Cluster) -> None:
    routes = FlakyRoutes()
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        routes.install(web)
        port = web.port
        flaky = [f"http://flaky.test:{port}/flaky/2/{i}" for i in range(4)]
        broken = [f"http://broken.test:{port}/broken/{i}" for i in range(3)]
        config = cluster.master_config(
            seeds=flaky + broken,
            master={"retry_base_delay": 0.05, "retry_max_delay": 0.2, "dead_letter_poll": 0.2},
            jobs={"default": {"max_retries": 3}},
        )
        master = cluster.start("master", "master", config)
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert cluster.wait(master, 60) == 0
        records = {r.url: r for r in cluster.records()}
        assert set(records) == set(flaky)  # 2 failures, then success: stored
        assert all(records[u].status == 200 for u in flaky)
        for url in flaky:
            assert routes.requests[("flaky.test", url.split(str(port))[1])] == 3
        for url in broken:
            assert routes.requests[("broken.test", url.split(str(port))[1])] == 4
        state = str(cluster.workdir / "state")
        letters = dead_letters(state, "list")
        assert sorted(letter["url"] for letter in letters) == sorted(broken)
        assert all(letter["attempts"] == 4 for letter in letters)
        assert all(letter["error"] == "http: status 500" for letter in letters)
        assert last_event(cluster, "master", "master_stopped")["dead_letters"] == 3

        routes.fixed = True
        dead_letters(state, "retry")
        master = cluster.start_again("master", cluster.workdir / "master.yaml")
        cluster.start_again("w1", cluster.workdir / "w1.yaml", role="worker")
        assert cluster.wait(master, 60) == 0
    assert {r.url for r in cluster.records()} == set(flaky + broken)
    assert dead_letters(state, "list") == []
    for url in broken:
        assert routes.requests[("broken.test", url.split(str(port))[1])] == 5


def dead_letters(state_dir: str, action: str) -> list[dict[str, object]]:
    proc = forkserver.run(
        [sys.executable, "-m", "nadird", "dead-letters", action, "--state-dir", state_dir],
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_corrupt_snapshot_refuses_to_start_and_rebuild_seen_recovers(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=2, pages=30)
    with run_in_thread(graph) as web:
        master = start_crawl(cluster, graph, workers=1)
        assert cluster.wait(master, 60) == 0
        first = len(page_requests(web))
        snapshot = cluster.workdir / "state" / "seen.bloom"
        snapshot.write_bytes(snapshot.read_bytes()[:100])
        refused = cluster.start_again("master", cluster.workdir / "master.yaml")
        assert refused.popen.wait(30) == 1
        log = refused.log_path.read_text()
        assert str(snapshot) in log and "--rebuild-seen" in log
        rebuilt = cluster.start_again(
            "master", cluster.workdir / "master.yaml", extra=["--rebuild-seen"]
        )
        cluster.start_again("w1", cluster.workdir / "w1.yaml", role="worker")
        assert cluster.wait(rebuilt, 60) == 0
        # Everything was already seen: the second run fetched nothing again.
        assert len(page_requests(web)) == first
    assert_exact_store(cluster, graph)


def test_a_crawl_with_queue_caps_records_its_overflow(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=2, pages=60)
    with run_in_thread(graph):
        config = cluster.master_config(
            jobs=site_job(graph), seeds=graph.seeds(), master={"max_queued_per_domain": 5}
        )
        master = cluster.start("master", "master", config)
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert cluster.wait(master, 60) == 0
    stopped = last_event(cluster, "master", "master_stopped")
    stored = len(cluster.records())
    # Every admitted URL was either crawled and stored or dropped into the
    # counted overflow record; none vanished.
    assert stopped["overflow"] > 0
    assert stored + stopped["overflow"] == stopped["seen"]
    assert stored < len(expected_set(graph))
