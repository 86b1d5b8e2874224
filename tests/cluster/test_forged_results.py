"""No forged result reaches the store: a crawl runs while a peer on the mesh
pushes Results for leases that do not exist, for another worker's leases,
for URLs its own lease does not hold, without or with the wrong session
token (and under CURVE, with another key, or with the real worker's own key).
Every one is dropped and counted; the store ends exactly as a clean crawl."""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import zmq
from support.forgery_helpers import FORGED, Forger, Keys, forged_page

from nadird.protocol.curve import generate_keypair, key_fingerprint, public_key
from nadird.testing.checks import (
    FIELDS,
    assert_exact_store,
    expected_set,
    last_event,
    page_requests,
    site_job,
)
from nadird.testing.checks import master_cli as cli
from nadird.testing.cluster import Cluster, wait_until, worker_address
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow


def make_keys(tmp: Path) -> Keys:
    """master, w1 (the real worker) and mallory allowed in; stranger not."""
    allowed = tmp / "allowed"
    allowed.mkdir()
    pairs = {name: generate_keypair(tmp / name, name) for name in ("master", "w1", "mallory")}
    pairs["stranger"] = generate_keypair(tmp / "stranger", "stranger")
    for name, (public, _) in pairs.items():
        os.chmod(public, 0o644)  # public keys may be read by anyone
        if name in ("w1", "mallory"):
            (allowed / f"{name}.key").write_bytes(public.read_bytes())
    return Keys(pairs)


def start(cluster: Cluster, graph: SiteGraph, keys: Keys | None) -> Any:
    # A long lease: the forger never heartbeats, yet keeps its bag until it
    # gives it back. The master forgets a worker silent for the lease period
    # (node_timeout's default), and then drops its BagDone and Bye as from an
    # unregistered peer: on a loaded machine the forging took more than 10 s.
    master = cluster.master_config(
        jobs=site_job(graph), seeds=graph.seeds(), master={"exit_when_done": False, "lease_ttl": 60}
    )
    worker = cluster.worker_config(1)
    worker["worker"]["bags"] = 1  # leaves domains free for the forger to be leased one
    if keys is None:  # the open mesh an operator may choose on one host
        master["security"] = worker["security"] = {"allow_insecure_loopback": True}
    else:
        master["security"] = {
            "master_secret_key": str(keys.pairs["master"][1]),
            "worker_keys_dir": str(keys.pairs["master"][0].parent.parent / "allowed"),
        }
        worker["security"] = {
            "worker_secret_key": str(keys.pairs["w1"][1]),
            "master_public_key": str(keys.pairs["master"][0]),
        }
    proc = cluster.start("master", "master", master)
    cluster.start("worker", "w1", worker)
    return proc


def forge(f: Forger, urls: list[str], curve: bool) -> None:
    """Every kind of forgery, each one message that must be dropped."""
    assert f.bag is not None
    bag = f.bag
    everything = [forged_page(u) for u in urls]  # every real URL (stored ones too)
    # Under CURVE the peer without the handshake uses the real worker's own key.
    anonymous = "w1" if curve else ""
    f.push(everything, "no-such-lease", 1, "w1", b"", key=anonymous)
    # Lease ids are sequential: the ones beside the forger's are the real worker's.
    prefix, mine = bag.lease.rsplit("-", 1)
    for n in range(1, int(mine) + 4):
        lease = f"{prefix}-{n}"
        for epoch in (1, 2):
            if lease == bag.lease and epoch == bag.epoch:
                continue
            f.push(everything, lease, epoch, "w1", b"", key=anonymous)
            f.push(everything, lease, epoch, "w1", os.urandom(16), key=anonymous)
            f.push(everything, lease, epoch, f.node, f.session)  # its own valid token
            f.push(everything, lease, epoch, "w1", f.session)
    own, other = bag.urls[0], next(u for u in urls if u not in bag.urls)
    # Its own live lease: a URL not in it (beside one it holds, at its leased
    # depth, so that only the stranger is wrong); a URL under a fingerprint it holds.
    held = forged_page(own, depth=bag.depths[0])
    f.push([held, forged_page(other)], bag.lease, bag.epoch, f.node, f.session)
    f.push([forged_page(other, fp=bag.fps[0])], bag.lease, bag.epoch, f.node, f.session)
    # ... with a wrong token, and from a peer that never did the handshake.
    f.push([forged_page(own)], bag.lease, bag.epoch, f.node, os.urandom(16))
    f.push([forged_page(own)], bag.lease, bag.epoch, f.node, b"", key=anonymous)
    if curve:  # the right token from another key than the one it registered with
        f.push([forged_page(own)], bag.lease, bag.epoch, f.node, f.session, key="w1")


@pytest.mark.parametrize("curve", [False, True], ids=["plain", "curve"])
def test_forged_results_never_reach_the_store(
    cluster: Cluster, tmp_path: Path, curve: bool
) -> None:
    graph = SiteGraph(hosts=3, pages=60)
    keys = make_keys(tmp_path) if curve else None
    ctx = zmq.Context()
    with run_in_thread(graph, latency=0.01) as web:
        master = start(cluster, graph, keys)
        forger = Forger(ctx, cluster.control, cluster.results, keys=keys, key="mallory")
        bag = forger.take_a_bag()
        assert wait_until(lambda: cli(cluster, "status")["stored_this_run"] >= 10, 60, interval=0.3)
        urls = sorted(expected_set(graph))
        stranger_since = time.monotonic()
        if curve:  # a key not on the allow-list: refused at the handshake, never counted
            forger.push([forged_page(urls[0])], bag.lease, bag.epoch, "w1", b"", key="stranger")
            forger.sent -= 1
        forge(forger, urls, curve)
        sent = forger.sent

        def dropped() -> int:
            status = cli(cluster, "status")
            return int(status.get("dropped_messages", 0))

        assert wait_until(lambda: dropped() >= sent, 60, interval=0.3)
        refused = cli(cluster, "status")["refused_results"]
        forger.give_back()  # its URLs go back to the queue, the real worker crawls them
        assert wait_until(lambda: cli(cluster, "status")["complete"], 90, interval=0.3)
        stranger_for = time.monotonic() - stranger_since
        forger.close()
        master.kill(signal.SIGTERM)
        assert master.popen.wait(30) == 0
        entries = page_requests(web)
    ctx.term()

    assert sum(refused.values()) == sent
    assert refused["not_leased"] == 2 and refused["session"] >= 2 and refused["no_lease"] >= 1
    assert refused.get("key", 0) == (1 if curve else 0)
    stopped = last_event(cluster, "master", "master_stopped")
    assert stopped["dropped_messages"] == sent
    assert stopped.get("late_results", 0) == 0 and stopped.get("handler_errors", 0) == 0
    # The store holds exactly the crawl, every page as the real worker fetched it.
    assert_exact_store(cluster, graph)
    for record in cluster.records():
        assert record.node == "w1" and record.checksum != FORGED, record.url
        assert FORGED not in record.data.values(), record.url
        if record.content_type == "text/html" and "/p/" in record.url:
            want = graph.expected_fields(record.url)
            assert record.data == {k: want[k] for k in FIELDS}, record.url
    fetched = Counter(graph.canonical(f"http://{e.host}{e.path}") for e in entries)
    assert set(fetched) == set(urls) and max(fetched.values()) == 1
    assert {e.client for e in entries} == {worker_address(1)}
    if keys is not None:
        assert_stranger_logged(cluster, keys, stranger_for)


def assert_stranger_logged(cluster: Cluster, keys: Keys, seconds: float) -> None:
    refusals = [e for e in cluster.proc("master").logs() if e["event"] == "curve_client_refused"]
    assert refusals, "the refused key was not logged"
    assert {e["key"] for e in refusals} == {key_fingerprint(public_key(keys.pairs["stranger"][0]))}
    assert len(refusals) <= seconds + 2  # at most once a second, though it keeps retrying
    # The worker reads the master's public key (mode 0644) without a warning.
    worker_events = {e["event"] for e in cluster.proc("w1").logs()}
    assert "secret_file_readable_by_others" not in worker_events
