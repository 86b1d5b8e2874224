"""Running as a service: sd_notify, SIGHUP reload, graceful stop."""

from __future__ import annotations

import itertools
import signal
import socket
import statistics
import time
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from nadird.testing.checks import page_requests, site_job
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import AccessEntry, run_in_thread

# How much shorter than the configured delay a gap between two requests may
# look in the access log: arrival times are the kernel's, each right to one
# clock tick, so up to two ticks (20 ms at HZ=100) off a gap.
JITTER = 0.03


def receive_states(sock: socket.socket, until: str, timeout: float) -> list[str]:
    states: list[str] = []
    deadline = time.monotonic() + timeout
    while until not in states and time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            states.append(sock.recv(4096).decode())
        except TimeoutError:
            break
    return states


def test_sd_notify_ready_watchdog_reloading_stopping(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(cluster.workdir / "notify.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(path)
        monkeypatch.setenv("NOTIFY_SOCKET", path)
        monkeypatch.setenv("WATCHDOG_USEC", "200000")
        master = cluster.start(
            "master", "master", cluster.master_config(master={"exit_when_done": False})
        )
        assert "READY=1" in receive_states(sock, "READY=1", 30)
        assert "WATCHDOG=1" in receive_states(sock, "WATCHDOG=1", 5)
        master.kill(signal.SIGHUP)
        states = receive_states(sock, "READY=1", 10)
        assert "RELOADING=1" in states
        assert states.index("RELOADING=1") < len(states) - 1 - states[::-1].index("READY=1")
        master.kill(signal.SIGTERM)
        assert "STOPPING=1" in receive_states(sock, "STOPPING=1", 10)
        assert master.popen.wait(30) == 0


def gaps_after(
    entries: list[AccessEntry], since: float, until: float = float("inf")
) -> list[float]:
    by_host: dict[str, list[float]] = defaultdict(list)
    for entry in entries:
        if since <= entry.arrived <= until:
            by_host[entry.host].append(entry.arrived)
    return [b - a for starts in by_host.values() for a, b in itertools.pairwise(sorted(starts))]


def test_sighup_changes_the_delay_live_and_rejects_a_bad_file(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=3, pages=200)
    with run_in_thread(graph, latency=0.01) as web:
        config = cluster.master_config(
            jobs=site_job(graph),
            seeds=graph.seeds(),
            master={"bag_size": 4},
            politeness={"delay": 0.0},
        )
        master = cluster.start("master", "master", config)
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert wait_until(lambda: len(page_requests(web)) > 60, 30)
        path = cluster.workdir / "master.yaml"
        config["politeness"] = {"delay": 0.3}
        path.write_text(yaml.safe_dump(config))
        sighup_at = time.time()
        master.kill(signal.SIGHUP)
        assert wait_until(lambda: any(e.get("event") == "reloaded" for e in master.logs()), 10)
        reloaded_at = time.time()
        changed = [e for e in master.logs() if e.get("event") == "config_changed"]
        assert [e["key"] for e in changed] == ["politeness.delay"]
        time.sleep(2.0)
        path.write_text("politeness:\n  delay: -1\n")
        master.kill(signal.SIGHUP)
        assert wait_until(
            lambda: any(e.get("event") == "reload_rejected" for e in master.logs()), 10
        )
        time.sleep(1.5)
        assert master.popen.poll() is None
        entries = page_requests(web)
        master.kill(signal.SIGTERM)
        assert master.popen.wait(30) == 0
    before = gaps_after(entries, 0, sighup_at)
    after = gaps_after(entries, reloaded_at + 1.0)  # bags leased before carry the old delay
    assert min(before) < 0.1
    assert after and min(after) >= 0.3 - JITTER
    assert statistics.median(after) >= 0.3 - 0.01
    rejected = next(e for e in master.logs() if e.get("event") == "reload_rejected")
    assert "politeness" in rejected["error"] and str(path) in rejected["error"]


def test_sigterm_on_a_worker_hands_its_bags_back_at_once(cluster: Cluster, tmp_path: Path) -> None:
    graph = SiteGraph(hosts=4, pages=200)
    with run_in_thread(graph, latency=0.01) as web:
        config = cluster.master_config(
            jobs=site_job(graph), seeds=graph.seeds(), master={"lease_ttl": 60.0}
        )
        master = cluster.start("master", "master", config)
        w1 = cluster.start("worker", "w1", cluster.worker_config(1))
        assert wait_until(lambda: len(page_requests(web)) > 50, 30)
        w1.kill(signal.SIGTERM)
        assert w1.popen.wait(30) == 0
        stopped_at = time.time()
        cluster.start("worker", "w2", cluster.worker_config(2))
        # Lease expiry is 60 s away: the crawl only finishes this soon if the
        # stopping worker handed its unfinished URLs back.
        assert cluster.wait(master, 40) == 0
    assert time.time() - stopped_at < 40
    from nadird.testing.checks import assert_exact_store

    assert_exact_store(cluster, graph)


def test_a_worker_reloads_fetch_settings_and_reports_restart_keys(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=2, pages=300)
    with run_in_thread(graph, latency=0.01) as web:
        config = cluster.master_config(
            jobs=site_job(graph), seeds=graph.seeds(), master={"exit_when_done": False}
        )
        cluster.start("master", "master", config)
        worker_config = cluster.worker_config(1)
        worker = cluster.start("worker", "w1", worker_config)
        assert wait_until(lambda: len(page_requests(web)) > 20, 30)
        worker_config["fetch"]["max_decoded_bytes"] = 200  # every page is now too large
        worker_config["fetch"]["pool_size"] = 7
        (cluster.workdir / "w1.yaml").write_text(yaml.safe_dump(worker_config))
        worker.kill(signal.SIGHUP)
        assert wait_until(lambda: any(e.get("event") == "reloaded" for e in worker.logs()), 10)
        reloaded_at = time.time()
        time.sleep(2.0)
        logs = worker.logs()
        worker.kill(signal.SIGTERM)
        assert worker.popen.wait(30) == 0
    changed = {e["key"] for e in logs if e.get("event") == "config_changed"}
    restart = {e["key"] for e in logs if e.get("event") == "config_needs_restart"}
    assert changed == {"fetch.max_decoded_bytes"} and restart == {"fetch.pool_size"}
    late = [r for r in cluster.records() if r.fetched_at > reloaded_at + 0.5]
    assert late and all(r.error is not None and "too_large" in r.error for r in late)
