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

from nadird.testing.checks import expected_set, last_event, page_requests, start_crawl
from nadird.testing.cluster import Cluster, read_records, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow
# Seconds within which a fetched page is stored, committed and replicated
# (store flush 0.1 s, commit 0.2 s, Litestream's interval 0.1 s, with margin).
SETTLED = 2.0


def restore(replica: str, state: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = ["restore", "--replica", replica, "--state-dir", str(state), *extra]
    return subprocess.run(
        [sys.executable, "-m", "nadird", *command],
        capture_output=True,
        text=True,
        timeout=120,
    )


def stored_urls(path: Path) -> list[str]:
    return [r.url for r in asyncio.run(read_records(str(path)))]


def lose_the_machine(cluster: Cluster, state: Path) -> None:
    """SIGKILL Litestream and the master at once, then delete the state directory."""
    master = cluster.proc("master")
    litestream = last_event(cluster, "master", "replica_started")["pid"]
    os.kill(litestream, signal.SIGKILL)
    master.kill(signal.SIGKILL)
    master.popen.wait(10)
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
        assert wait_until(lambda: len(page_requests(web)) > 0.5 * len(expected), 90)
        lost_at = time.time()
        lose_the_machine(cluster, state)
        # Fetched well before the loss: stored, committed and on the replica.
        done_before = {
            f"http://{e.host}{e.path}" for e in page_requests(web) if e.t_end < lost_at - SETTLED
        }

        done = restore(replica, state)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert {"frontier.db", "robots.db", "pages.db"} <= set(report["restored"])
        assert "seen.bloom" in report["not_replicated"]
        restored = set(stored_urls(state / "pages.db"))
        assert len(restored) > 0.3 * len(expected)
        restarted_at = time.time()

        again = cluster.start_again("master", cluster.workdir / "master.yaml")
        assert cluster.wait(again, 180) == 0
        after = [e for e in page_requests(web) if e.t_start >= restarted_at]

    urls = stored_urls(state / "pages.db")
    assert len(urls) == len(set(urls)), "a URL was stored twice"
    assert set(urls) == expected, (sorted(set(urls) ^ expected)[:5], len(urls))
    fetched_again = {f"http://{e.host}{e.path}" for e in after} & restored
    assert not fetched_again, sorted(fetched_again)[:5]
    fetched_again = {f"http://{e.host}{e.path}" for e in after} & done_before
    assert not fetched_again, sorted(fetched_again)[:5]
    assert last_event(cluster, "master", "seen_rebuilt")["stored"] == len(restored)
