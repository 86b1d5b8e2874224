"""CURVE authentication of the mesh, refusing to run open, hostile frames."""

from __future__ import annotations

import os
import random
import signal
import stat
import sys
import time
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zmq

from nadird.protocol.codec import encode
from nadird.protocol.curve import generate_keypair
from nadird.protocol.messages import BagDone, Bye, Credit, Heartbeat, PageResult, Results
from nadird.testing import forkserver
from nadird.testing.checks import (
    assert_exact_store,
    last_event,
    page_requests,
    site_job,
)
from nadird.testing.checks import (
    master_cli as cli,
)
from nadird.testing.cluster import Cluster, wait_until, worker_address
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread


def keys(tmp: Path) -> dict[str, Any]:
    allowed = tmp / "allowed"
    allowed.mkdir()
    out: dict[str, Any] = {"allowed": allowed}
    out["master"] = generate_keypair(tmp / "master", "master")
    for name in ("w1", "w2"):
        out[name] = generate_keypair(tmp / name, name)
    (allowed / "w1.key").write_bytes(out["w1"][0].read_bytes())
    return out


def secure_worker(cluster: Cluster, index: int, k: dict[str, Any], name: str) -> dict[str, Any]:
    config = cluster.worker_config(index)
    config["security"] = {
        "worker_secret_key": str(k[name][1]),
        "master_public_key": str(k["master"][0]),
    }
    return config


def secure_master(cluster: Cluster, k: dict[str, Any], graph: SiteGraph, **extra: Any) -> Any:
    return cluster.master_config(
        jobs=site_job(graph),
        seeds=graph.seeds(),
        security={"master_secret_key": str(k["master"][1]), "worker_keys_dir": str(k["allowed"])},
        **extra,
    )


@pytest.mark.slow
def test_keygen_writes_a_private_secret_key(tmp_path: Path) -> None:
    proc = forkserver.run(
        [sys.executable, "-m", "nadird", "keygen", "--out", str(tmp_path), "--name", "edge-1"],
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    secret = tmp_path / "edge-1.key_secret"
    assert stat.S_IMODE(os.stat(secret).st_mode) == 0o600
    assert "secret-key" in secret.read_text() and (tmp_path / "edge-1.key").exists()


def test_only_allowed_keys_get_work(cluster: Cluster, tmp_path: Path) -> None:
    k = keys(tmp_path)
    graph = SiteGraph(hosts=3, pages=40)
    with run_in_thread(graph) as web:
        master = cluster.start("master", "master", secure_master(cluster, k, graph))
        cluster.start("worker", "w2", secure_worker(cluster, 2, k, "w2"))  # unknown key
        cluster.start("worker", "w3", cluster.worker_config(3))  # no key at all
        time.sleep(1.0)
        assert page_requests(web) == []  # neither got anything
        cluster.start("worker", "w1", secure_worker(cluster, 1, k, "w1"))
        assert cluster.wait(master, 60) == 0
        entries = page_requests(web)
    assert {e.client for e in entries} == {worker_address(1)}
    assert_exact_store_any(cluster, graph)
    joined = [
        e["worker"] for e in cluster.proc("master").logs() if e.get("event") == "worker_joined"
    ]
    assert joined == ["w1"]


def assert_exact_store_any(cluster: Cluster, graph: SiteGraph) -> None:
    assert_exact_store(cluster, graph)


def test_a_revoked_key_stops_working_after_sighup(cluster: Cluster, tmp_path: Path) -> None:
    k = keys(tmp_path)
    graph = SiteGraph(hosts=3, pages=300)
    with run_in_thread(graph, latency=0.02) as web:
        config = secure_master(cluster, k, graph, master={"exit_when_done": False})
        master = cluster.start("master", "master", config)
        cluster.start("worker", "w1", secure_worker(cluster, 1, k, "w1"))
        assert wait_until(lambda: len(page_requests(web)) > 20, 30)
        (k["allowed"] / "w1.key").unlink()
        master.kill(signal.SIGHUP)
        assert wait_until(
            lambda: any(e.get("event") == "curve_allow_list_reloaded" for e in master.logs()), 10
        )
        revoked_at = time.time()
        # The worker's heartbeats are no longer answered: within a lease
        # period it stops by itself, and nothing it sends has effect.
        time.sleep(3.0)
        count = len(page_requests(web))
        time.sleep(1.5)
        assert len(page_requests(web)) == count
        master.kill(signal.SIGTERM)
        assert master.popen.wait(30) == 0
    late = [e for e in page_requests(web) if e.t_start > revoked_at + 2.0]
    assert late == []
    reloaded = last_event(cluster, "master", "curve_allow_list_reloaded")
    assert reloaded["revoked"] == 1


def test_an_open_master_refuses_to_start_unless_insecure(cluster: Cluster) -> None:
    config = cluster.master_config(master={"bind": "tcp://0.0.0.0:0"})
    refused = cluster.start("master", "open", config)
    assert refused.popen.wait(30) == 2
    text = refused.log_path.read_text()
    assert "master.bind" in text and "security.master_secret_key" in text
    config["security"] = {"insecure": True}
    config["master"]["exit_when_done"] = True
    started = cluster.start("master", "insecure", config)
    assert started.popen.wait(30) == 0
    assert any(e.get("event") == "insecure_mesh" for e in started.logs())


def bad_frames(rng: random.Random, lease_ids: list[str], count: int) -> list[bytes]:
    valid = [
        encode(Credit(node="intruder", bags=5)),
        encode(Heartbeat(node="intruder", leases=lease_ids[:3])),
        encode(BagDone(node="w1", lease=lease_ids[0] if lease_ids else "x", epoch=1)),
        encode(Bye(node="w1")),
        encode(
            Results(
                node="intruder",
                lease=lease_ids[0] if lease_ids else "x",
                epoch=1,
                job="default",
                pages=[
                    PageResult(
                        url="http://evil.test/",
                        fp=b"\x00" * 16,
                        final_url="http://evil.test/",
                        status=200,
                        fetched_at=0.0,
                        depth=0,
                    )
                ],
            )
        ),
    ]
    frames: list[bytes] = []
    while len(frames) < count:
        kind = rng.randrange(7)
        if kind == 0:
            frames.append(rng.randbytes(rng.randrange(1, 200)))
        elif kind == 1:  # truncated valid message
            frame = rng.choice(valid)
            frames.append(frame[: rng.randrange(1, len(frame))])
        elif kind == 2:  # wrong types
            frames.append(msgpack.packb({"v": 1, "k": "credit", "node": 5, "bags": "many"}))
        elif kind == 3:  # huge string (a few: each is over a megabyte)
            size = 2 * 1024 * 1024 if len(frames) % 50 == 0 else 300
            frames.append(msgpack.packb({"v": 1, "k": "bye", "node": "x" * size}))
        elif kind == 4:  # nesting bomb
            frames.append(b"\x91" * 50_000 + b"\xc0")
        elif kind == 5:  # unknown kind / version
            frames.append(msgpack.packb({"v": rng.choice([1, 2]), "k": "steal"}))
        else:  # well-formed, but not ours to send
            frames.append(rng.choice(valid))
    return frames


def test_hostile_frames_are_dropped_and_counted_while_a_crawl_completes(
    cluster: Cluster,
) -> None:
    graph = SiteGraph(hosts=4, pages=80)
    rng = random.Random(3)
    with run_in_thread(graph, latency=0.003) as web:
        config = cluster.master_config(
            jobs=site_job(graph), seeds=graph.seeds(), master={"exit_when_done": False}
        )
        master = cluster.start("master", "master", config)
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert wait_until(lambda: len(page_requests(web)) > 10, 30)
        ctx = zmq.Context()
        dealer, push = ctx.socket(zmq.DEALER), ctx.socket(zmq.PUSH)
        cluster.member(dealer, push)  # frames past the handshake, as a worker's
        dealer.connect(cluster.control)
        push.connect(cluster.results)
        leases = [e["lease"] for e in master.logs() if "lease" in e]
        control = bad_frames(rng, leases, 1500)
        results = bad_frames(rng, leases, 1500)
        for a, b in zip(control, results, strict=True):
            dealer.send(a)
            push.send(b)
        expected = len(control) + len(results)
        assert wait_until(lambda: cli(cluster, "status").get("dropped_messages") == expected, 60)
        assert wait_until(lambda: cli(cluster, "status")["complete"], 60)
        for sock in (dealer, push):
            sock.close(linger=0)
        ctx.term()
        master.kill(signal.SIGTERM)
        assert master.popen.wait(30) == 0
    assert_exact_store(cluster, graph)
    stopped = last_event(cluster, "master", "master_stopped")
    assert stopped["dropped_messages"] == expected
    assert stopped.get("handler_errors", 0) == 0


def test_a_world_readable_config_with_a_secret_is_warned_about(cluster: Cluster) -> None:
    config = cluster.master_config(api={"port": 0, "token": "t" * 20})
    config["master"]["exit_when_done"] = True
    proc = cluster.start("master", "master", config)
    os.chmod(cluster.workdir / "master.yaml", 0o644)
    assert proc.popen.wait(30) == 0
    proc = cluster.start_again("master", cluster.workdir / "master.yaml")
    assert proc.popen.wait(30) == 0
    warned = [e for e in proc.logs() if e.get("event") == "secret_file_readable_by_others"]
    assert warned and warned[0]["path"].endswith("master.yaml")
