"""A worker says when it cannot reach its master, and shows its own health."""

from __future__ import annotations

import itertools
import json
import signal
import socket
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from support.cli_helpers import nadird

from nadird.testing.checks import site_job
from nadird.testing.cluster import Cluster, Proc, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread


def events(proc: Proc, name: str) -> list[dict[str, Any]]:
    return [e for e in proc.logs() if e.get("event") == name]


def http_url(proc: Proc) -> str:
    assert wait_until(lambda: events(proc, "worker_http_started"), 20)
    return str(events(proc, "worker_http_started")[0]["url"])


def get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            body = response.read()
            status = response.status
    except urllib.error.HTTPError as exc:
        body, status = exc.read(), exc.code
    if url.endswith("/metrics"):
        return status, body.decode()
    return status, json.loads(body)


def receive_all(sock: socket.socket) -> list[str]:
    states = []
    sock.settimeout(0.0)
    while True:
        try:
            states.append(sock.recv(4096).decode())
        except BlockingIOError:
            return states


@pytest.mark.slow
def test_a_worker_without_its_master_says_so_then_recovers(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    notify = str(cluster.workdir / "notify.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(notify)
        monkeypatch.setenv("NOTIFY_SOCKET", notify)
        config = cluster.worker_config(1)
        config["worker"].update(unreachable_after=0.4, http={"enabled": True, "port": 0})
        worker = cluster.start("worker", "w1", config)
        url = http_url(worker)
        assert wait_until(lambda: len(events(worker, "master_unreachable")) >= 3, 20)
        status, health = get(url + "/healthz")
        assert status == 503 and health["connected"] is False
        warned = events(worker, "master_unreachable")
        assert all(w["master"] == cluster.control for w in warned)
        silences = [w["silent_s"] for w in warned[:3]]
        gaps = [b - a for a, b in itertools.pairwise(silences)]
        assert silences[0] >= 0.4 and gaps[1] > gaps[0] * 1.5, silences

        monkeypatch.delenv("NOTIFY_SOCKET")
        cluster.start("master", "master", cluster.master_config(master={"exit_when_done": False}))
        assert wait_until(lambda: events(worker, "master_reachable"), 20)
        status, health = get(url + "/healthz")
        assert status == 200 and health["connected"] is True
        states = receive_all(sock)
    assert states[0].startswith("STATUS=waiting for the master at")
    assert any(s.startswith("STATUS=no answer from the master") for s in states)
    assert "READY=1" in states  # the process itself is up: systemd start does not wait
    assert states[-1] == f"STATUS=connected to the master at {cluster.control}"


@pytest.mark.slow
def test_a_worker_serves_its_own_health_and_metrics(cluster: Cluster, tmp_path: Path) -> None:
    graph = SiteGraph(hosts=2, pages=120)
    with run_in_thread(graph, latency=0.005):
        config = cluster.master_config(jobs=site_job(graph), seeds=graph.seeds())
        master = cluster.start("master", "master", config)
        worker_config = cluster.worker_config(1)
        worker_config["worker"].update(exit_when_done=False, http={"enabled": True, "port": 0})
        worker = cluster.start("worker", "w1", worker_config)
        url = http_url(worker)
        assert wait_until(lambda: get(url + "/healthz")[1]["bags_in_flight"] > 0, 30)
        assert cluster.wait(master, 60) == 0
        assert wait_until(lambda: get(url + "/healthz")[0] == 503, 10)  # master gone
        _, health = get(url + "/healthz")
        _, metrics = get(url + "/metrics")
        worker.kill(signal.SIGTERM)
        assert worker.popen.wait(30) == 0
    records = cluster.records()
    missing = sum(1 for r in records if r.status == 404)
    assert missing > 0
    assert health["pages_fetched"] == len(records)
    assert health["statuses"]["4xx"] == missing
    assert health["statuses"]["2xx"] + missing == len(records)
    assert health["errors"] == {}  # every fetch got an answer; a 404 is a status
    assert health["bags_in_flight"] == 0 and health["node"] == "w1"
    assert f"nadird_worker_pages_total {float(len(records))}" in metrics
    assert f'nadird_worker_http_status_total{{class="4xx"}} {float(missing)}' in metrics
    assert "nadird_worker_connected 0.0" in metrics


@pytest.mark.slow
def test_a_worker_whose_health_port_is_taken_says_so_in_one_line(tmp_path: Path) -> None:
    """As a master does: exit status 2 (not restarted by systemd), one line."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = tmp_path / "worker.yaml"
        config.write_text(
            "node: w2\nworker:\n  master: tcp://127.0.0.1:1\n  results: tcp://127.0.0.1:2\n"
            f"  http: {{enabled: true, host: 127.0.0.1, port: {port}}}\n"
        )
        proc = nadird("--role", "worker", "-c", str(config), "--log-format", "json")
    assert proc.returncode == 2, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"nadird: error: cannot listen on 127.0.0.1:{port} (worker.http.port): "
        "Address already in use"
    ]
