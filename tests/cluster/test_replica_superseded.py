"""No two masters on one replica while they run: the old master never died (a
partition, a hung host), the state was restored from its replica on another
host and a master started there. The old one reads the replica's generation
every master.replica_check_interval, and stops (exit status 3, an alert, no
more replication) within it; its workers, which list both masters, take
their bags to the new one, and every page ends in the new master's store
once (real processes, a file:// replica, the synthetic web's access log)."""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support.receiver import AlertReceiver, receiver_in_thread
from test_replica_restore import stored_urls
from test_worker_masters import WORKERS, elsewhere, start_workers, switches

from nadird.testing import forkserver
from nadird.testing.checks import expected_set, last_event, page_requests, site_job
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow
CHECK = 0.3  # master.replica_check_interval
MASTER_TIMEOUT = 3.0  # the workers' (test_worker_masters.start_workers)
SETTLED = 2.0  # a fetched page stored, committed and on the replica (see test_replica_restore)


def master_config(
    cluster: Cluster, graph: SiteGraph, at: tuple[str, str], state: Path, **more: Any
) -> dict[str, Any]:
    config = cluster.master_config(jobs=site_job(graph), seeds=graph.seeds(), **more)
    # Paced, so that the crawl outlasts a restore and a master's start
    # (seconds each on a loaded machine).
    config["politeness"] = {"delay": 0.2}
    replica = (cluster.workdir.parent / "replica").as_uri()
    config["master"] |= {
        "bind": at[0],
        "results_bind": at[1],
        "state_dir": str(state),
        "lease_ttl": 9.0,  # above the workers' master_timeout (test_worker_masters)
        "replica_sync_interval": 0.1,
        "replica": replica,
        "replica_check_interval": CHECK,
    }
    config["store"] = {"uri": f"sqlite:///{state / 'pages.db'}", "flush_interval": 0.1}
    # One host's mesh: the masters share the local keys the workers read.
    config["security"] = {"local_keys_dir": str(cluster.local_keys)}
    return config


def restore(replica: str, state: Path) -> dict[str, Any]:
    done = forkserver.run(
        [
            sys.executable,
            "-m",
            "nadird",
            "restore",
            "--replica",
            replica,
            "--state-dir",
            str(state),
        ],
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_a_running_master_stops_when_one_restored_from_its_replica_starts(
    cluster: Cluster, tmp_path: Path
) -> None:
    graph = SiteGraph(hosts=4, pages=80)
    first, second = (cluster.control, cluster.results), elsewhere(cluster)
    replica = (cluster.workdir.parent / "replica").as_uri()  # master_config's
    old_state, new_state = cluster.workdir / "state", cluster.workdir / "state-b"
    rule = {"type": "replica_superseded", "channels": ["ops"], "severity": "critical"}
    with run_in_thread(graph, latency=0.02) as web, receiver_in_thread(AlertReceiver()) as hook:
        expected = set(expected_set(graph))
        alerts = {
            "channels": {"ops": {"type": "webhook", "url": hook.url(), "retry_delay": 0.05}},
            "rules": [rule],
        }
        old_config = master_config(cluster, graph, first, old_state, alerts=alerts)
        # Here till it is superseded, should it finish before (a slow restore).
        old_config["master"]["exit_when_done"] = False
        old = cluster.start("master", "master", old_config)
        start_workers(cluster, [first, second])
        assert wait_until(lambda: len(page_requests(web)) > 0.15 * len(expected), 90)
        # Another host restores the replica while the old master runs on, and
        # starts a master on it.
        restored_at = time.time()
        report = restore(replica, new_state)
        assert report["generation"]["n"] == 1
        new = cluster.start("master", "master-b", master_config(cluster, graph, second, new_state))
        assert cluster.wait(old, 60) == 3
        stopped_at = time.time()
        assert cluster.wait(new, 180) == 0
        for name in WORKERS:
            assert cluster.wait(cluster.proc(name), 60) == 0
        requests = page_requests(web)

    taken = last_event(cluster, "master-b", "replica_generation")
    assert (taken["generation"], taken["replica"]) == (2, 1)
    said = last_event(cluster, "master", "replica_superseded")
    assert (said["generation"], said["replica_generation"]) == (1, 2)
    assert said["host"] and said["replica_host"] and said["replica_started_at"] > 0
    assert "generation 2" in said["error"] and "generation 1" in said["error"]
    # Within the interval of its start (a few reads, each a litestream restore).
    assert stopped_at - restored_at < 30
    last_line = old.log_path.read_text().splitlines()[-1]
    assert last_line.startswith("nadird: error: the replica ") and replica in last_line
    # The replica is the new master's, whole: generation 2, and its last state.
    check = restore(replica, tmp_path / "check")
    assert check["generation"]["n"] == 2 and check["checked"] == "ok"
    assert check["crawl"]["known"] == len(expected) and check["crawl"]["queued"] == 0
    [alert] = [p for p in hook.payloads() if p["rule"] == "replica_superseded"]
    assert alert["severity"] == "critical" and "generation 2" in alert["details"]["reason"]

    # The workers were told nothing by the old master (the only shutdown they
    # heard is the new master's, done): they left it for the new one with
    # their bags (adopted when the restored state knew their leases, leased
    # again otherwise: either way, see the store below).
    for name in WORKERS:
        told = [e for e in cluster.proc(name).logs() if e.get("event") == "master_shutdown"]
        assert all(e["done"] for e in told), told
        assert (first[0], second[0]) in [(e["left"], e["to"]) for e in switches(cluster, name)]
    # Every page in the new master's store, once.
    urls = stored_urls(new_state / "pages.db")
    assert len(urls) == len(set(urls)), "a URL was stored twice"
    assert set(urls) == expected, (sorted(set(urls) ^ expected)[:5], len(urls))
    # Fetched twice: pages whose results reached the old master only, between
    # the copy the restore took and the workers' move to the new master
    # (worker.master_timeout after the old one stopped): the new master's
    # state did not have them. Never one fetched before the restore's copy,
    # nor one the new master had leased itself.
    first_fetch: dict[str, float] = {}
    for e in requests:
        first_fetch.setdefault(f"{e.host}{e.path}", e.t_end)
    counts = Counter(f"{e.host}{e.path}" for e in requests)
    twice = {url for url, n in counts.items() if n > 1}
    moved_by = stopped_at + MASTER_TIMEOUT + SETTLED
    outside = {url for url in twice if not restored_at - SETTLED <= first_fetch[url] <= moved_by}
    assert not outside, sorted(outside)[:5]
