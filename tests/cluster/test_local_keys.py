"""A mesh on one host needs keys too: the master makes them in its state dir
(mode 0700, secrets 0600), its workers read them there, and a process that
cannot read them (another local user's) gets no bag."""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

from nadird.protocol.curve import generate_keypair
from nadird.testing import forkserver
from nadird.testing.checks import assert_exact_store, page_requests, site_job
from nadird.testing.cluster import Cluster, wait_until, worker_address
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

STRANGERS = {"mallory": 3, "eve": 4}  # node -> worker_address index


def events(cluster: Cluster, name: str, event: str) -> list[dict[str, Any]]:
    return [e for e in cluster.proc(name).logs() if e.get("event") == event]


def stranger(cluster: Cluster, node: str, security: dict[str, Any]) -> dict[str, Any]:
    config = cluster.worker_config(STRANGERS[node])
    config["node"] = node
    config["worker"]["unreachable_after"] = 2.0
    config["security"] = security
    return config


def heard(cluster: Cluster, node: str) -> bool:
    answers = ("worker_registered", "master_unreachable")
    return any(e.get("event") in answers for e in cluster.proc(node).logs())


def own_keys(cluster: Cluster, tmp: Path) -> dict[str, Any]:
    """Eve's own key pair, with the master's public key (public keys leak)."""
    generate_keypair(tmp / "eve", "eve")
    assert wait_until((cluster.local_keys / "master.key").exists, 30)
    shutil.copy(cluster.local_keys / "master.key", tmp / "eve" / "master.key")
    return {
        "worker_secret_key": str(tmp / "eve" / "eve.key_secret"),
        "master_public_key": str(tmp / "eve" / "master.key"),
    }


def test_a_stranger_without_the_local_keys_gets_no_bag(cluster: Cluster, tmp_path: Path) -> None:
    graph = SiteGraph(hosts=3, pages=30)
    with run_in_thread(graph, latency=0.005) as web:
        config = cluster.master_config(jobs=site_job(graph), seeds=graph.seeds())
        master = cluster.start("master", "master", config)
        # The strangers come first: every bag would be theirs if they got in.
        plain = {"allow_insecure_loopback": True}  # no keys, as on loopback before
        assert wait_until(lambda: events(cluster, "master", "master_started"), 30)
        cluster.start("worker", "mallory", stranger(cluster, "mallory", plain))
        # It says which came first: the master's Welcome, or two seconds of silence.
        assert wait_until(lambda: heard(cluster, "mallory"), 30)
        assert not events(cluster, "mallory", "worker_registered")
        assert not page_requests(web)
        cluster.start("worker", "eve", stranger(cluster, "eve", own_keys(cluster, tmp_path)))
        assert wait_until(lambda: events(cluster, "master", "curve_client_refused"), 30)
        assert not page_requests(web)
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert cluster.wait(master, 120) == 0
        entries = page_requests(web)
    strangers = {worker_address(i) for i in STRANGERS.values()}
    assert entries and not [e for e in entries if e.client in strangers]
    joined = {e["worker"] for e in events(cluster, "master", "worker_joined")}
    assert joined == {"w1"}
    assert_exact_store(cluster, graph)
    assert events(cluster, "w1", "local_keys_used")
    assert stat.S_IMODE(os.stat(cluster.local_keys).st_mode) == 0o700
    for name in ("master", "worker"):
        mode = os.stat(cluster.local_keys / f"{name}.key_secret").st_mode
        assert stat.S_IMODE(mode) == 0o600


def test_nadird_crawl_runs_its_workers_on_the_keys_its_master_made(tmp_path: Path) -> None:
    graph = SiteGraph(hosts=2, pages=20)
    state = tmp_path / "state"
    with run_in_thread(graph) as web:
        command = [
            sys.executable, "-m", "nadird", "crawl", *graph.seeds(), "--resolve",
            "*.test=127.0.0.1", "--allow-private", "--delay", "0", "--workers", "2",
            "--state-dir", str(state), "--store", f"sqlite:///{tmp_path / 'crawl.db'}",
        ]  # fmt: skip
        proc = forkserver.run(command, cwd=tmp_path, timeout=180)
        entries = page_requests(web)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["complete"] is True and summary["pages"] == len(entries) > 0
    assert '"curve_enabled"' in proc.stderr
    assert proc.stderr.count('"local_keys_used"') >= 2  # each worker
    assert stat.S_IMODE(os.stat(state / "keys").st_mode) == 0o700
