"""The crawl survives the loss of the master's machine: its state directory
replicated by Litestream (master.replica: file://...), the master and its
Litestream killed, the directory deleted, `nadird restore` into a new one, and
a master started on it goes on without fetching again what was done (the
synthetic web's access log is the judge)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from support.receiver import AlertReceiver, receiver_in_thread
from test_api import api, request

from nadird.testing import forkserver
from nadird.testing.checks import expected_set, last_event, page_requests, start_crawl
from nadird.testing.cluster import Cluster, read_records, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow
# Seconds within which a fetched page is stored, committed and replicated
# (store flush 0.1 s, commit 0.2 s, Litestream's interval 0.1 s, with margin).
SETTLED = 2.0


def restore(*command: str) -> subprocess.CompletedProcess[str]:
    return forkserver.run([sys.executable, "-m", "nadird", "restore", *command], timeout=120)


def stored_urls(path: Path) -> list[str]:
    return [r.url for r in asyncio.run(read_records(str(path)))]


def replica_metrics(cluster: Cluster) -> dict[str, float]:
    url, token = api(cluster)
    status, text = request(url, "/metrics", token)
    assert status == 200
    return {
        family.name: family.samples[0].value
        for family in text_string_to_metric_families(text.decode())
        if family.name.startswith("nadird_replica")
    }


WORKERS = ("w1", "w2")  # start_crawl's


def lose_the_machine(cluster: Cluster, state: Path) -> None:
    """SIGKILL Litestream, the master and its workers (a loopback cluster's
    workers run on the master's machine) at once, then delete the state
    directory."""
    litestream = last_event(cluster, "master", "replica_started")["pid"]
    os.kill(litestream, signal.SIGKILL)
    for name in ("master", *WORKERS):
        cluster.proc(name).kill(signal.SIGKILL)
    for name in ("master", *WORKERS):
        cluster.proc(name).popen.wait(10)
    assert wait_until(lambda: not Path(f"/proc/{litestream}").exists(), 10)
    shutil.rmtree(state)


def test_a_restored_master_goes_on_where_the_lost_one_left_off(
    cluster: Cluster, tmp_path: Path
) -> None:
    graph = SiteGraph(hosts=6, pages=150)
    state = cluster.workdir / "state"
    replica = (tmp_path / "replica").as_uri()
    master = {"replica": replica, "replica_sync_interval": 0.1, "snapshot_interval": 1.0}
    store = {"uri": f"sqlite:///{state / 'pages.db'}", "flush_interval": 0.1}
    with run_in_thread(graph, latency=0.01) as web:
        expected = set(expected_set(graph))  # with the web's port
        start_crawl(cluster, graph, master=master, store=store)
        assert wait_until(lambda: len(page_requests(web)) > 0.2 * len(expected), 90)
        metrics = replica_metrics(cluster)
        assert metrics["nadird_replica_up"] == 1 and metrics["nadird_replica_failures"] == 0
        assert metrics["nadird_replica_lag_seconds"] < SETTLED
        assert wait_until(lambda: len(page_requests(web)) > 0.5 * len(expected), 90)
        lost_at = time.time()
        lose_the_machine(cluster, state)
        # Fetched well before the loss: stored, committed and on the replica.
        done_before = {
            f"http://{e.host}{e.path}" for e in page_requests(web) if e.t_end < lost_at - SETTLED
        }

        done = restore("-c", str(cluster.workdir / "master.yaml"))  # its replica and state_dir
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert {"frontier.db", "robots.db", "pages.db"} <= set(report["restored"])
        assert "seen.bloom" in report["not_replicated"]
        crawl, position = report["crawl"], report["positions"]["frontier.db"]
        assert crawl["queued"] > 0 and crawl["leases"] > 0
        assert len(expected) >= crawl["known"] >= 0.5 * len(expected)
        assert position["txid"] > 1 and 0 <= position["age_seconds"] < 60
        by_options = ("--replica", replica, "--state-dir", str(state))
        refused = restore(*by_options)  # it holds the files now
        assert refused.returncode == 2 and "--state-dir" in refused.stderr
        assert len(refused.stderr.splitlines()) == 1
        again = restore(*by_options, "--force")
        assert again.returncode == 0
        assert json.loads(again.stdout)["crawl"] == crawl
        restored = set(stored_urls(state / "pages.db"))
        assert len(restored) > 0.3 * len(expected)
        restarted_at = time.time()

        again = cluster.start_again("master", cluster.workdir / "master.yaml")
        # The new machine's workers take the keys the restored master makes
        # (local keys are not replicated: docs/operations/replication.md).
        for name in WORKERS:
            cluster.start_again(name, cluster.workdir / f"{name}.yaml", role="worker")
        assert cluster.wait(again, 180) == 0
        after = [e for e in page_requests(web) if e.t_start >= restarted_at]

    urls = stored_urls(state / "pages.db")
    assert len(urls) == len(set(urls)), "a URL was stored twice"
    assert set(urls) == expected, (sorted(set(urls) ^ expected)[:5], len(urls))
    fetched_again = {f"http://{e.host}{e.path}" for e in after} & restored
    assert not fetched_again, sorted(fetched_again)[:5]
    fetched_again = {f"http://{e.host}{e.path}" for e in after} & done_before
    assert not fetched_again, sorted(fetched_again)[:5]
    # A snapshot before the loss trimmed the admission log: the seen set is
    # rebuilt from the restored store. A loss before any snapshot leaves the
    # log whole, and replaying it gives every URL the crawl knew.
    master_logs = next(p for p in reversed(cluster.procs) if p.name == "master").logs()
    rebuilt = [e for e in master_logs if e.get("event") == "seen_rebuilt"]
    if rebuilt:
        assert rebuilt[-1]["stored"] == len(restored)
    else:
        loaded = last_event(cluster, "master", "seen_loaded")
        assert loaded["snapshot"] is False and loaded["replayed"] == crawl["known"]


def test_a_replica_that_cannot_be_written_is_counted_and_reported_and_the_crawl_goes_on(
    cluster: Cluster,
) -> None:
    graph = SiteGraph(hosts=2, pages=40)
    # /proc takes no new directory: every upload fails.
    master = {"replica": "file:///proc/nadird-replica", "replica_max_lag": 0.5}
    master |= {"replica_sync_interval": 0.1, "exit_when_done": False}
    with run_in_thread(graph, latency=0.001), receiver_in_thread(AlertReceiver()) as hook:
        rule = {"type": "replica_lag", "channels": ["ops"], "after": 1.0}
        channels = {"ops": {"type": "webhook", "url": hook.url(), "retry_delay": 0.05}}
        start_crawl(cluster, graph, master=master, alerts={"channels": channels, "rules": [rule]})
        url, _ = api(cluster)
        assert wait_until(lambda: request(url, "/healthz", None)[0] == 503, 30)
        body = json.loads(request(url, "/healthz", None)[1])
        assert body["replica"]["max_lag"] == 0.5 and body["replica"]["lag_seconds"] > 0.5
        assert "frontier.db" in body["replica"]["dbs"]
        # Its "monitor error" lines, logged and counted.
        assert wait_until(lambda: replica_metrics(cluster)["nadird_replica_failures"] >= 1, 30)
        assert replica_metrics(cluster)["nadird_replica_lag_seconds"] > 0.5
        assert cluster.proc("master").popen.poll() is None  # it goes on
        # The replica_lag rule, delivered to its channel.
        assert wait_until(lambda: any(p["rule"] == "replica_lag" for p in hook.payloads()), 30)
        alert = next(p for p in hook.payloads() if p["rule"] == "replica_lag")
    # The payload rounds to 3 decimals: a lag just past 1 s reads 1.
    assert alert["state"] == "firing" and alert["value"] >= 1 and alert["threshold"] == 1
    assert any(e.get("event") == "litestream" for e in cluster.proc("master").logs())
