"""A registered worker that lies: a real master and a real worker crawl the
synthetic web while a hand-written client takes a bag over the real protocol
and answers it with forged claims: links under other URLs' fingerprints, real
links under made-up ones, a link outside the job's rules, a forged item key
and fetch time, a page at a made-up depth, a page not in its bag, and a wait
that would stop its domain for good. Judged from outside: the access log and
the store, and the master's counters and log."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from typing import Any

import pytest
import zmq
from support.forgery_helpers import FORGED, Forger, local_member

from nadird.common.urls import fingerprint, host_of
from nadird.protocol.messages import Bag, BagDone, Bye, PageResult
from nadird.testing.checks import master_cli as cli
from nadird.testing.checks import page_requests, site_job
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import OUTSIDE_HOST, SiteGraph
from nadird.testing.web import AccessEntry, run_in_thread

pytestmark = pytest.mark.slow

REST = 1.0  # the longest wait the master's fetch settings allow, in this test


def lies(graph: SiteGraph, bag: Bag, target_sku: str) -> PageResult:
    """The forger's result for its one URL (a home page)."""
    home = bag.urls[0]
    host = host_of(home)
    victim, carrier = graph.url(host, "/p/7"), graph.url(host, "/p/17")
    real = graph.out_links(home)  # each under a made-up fingerprint: admitted once all the same
    links = [*real, carrier, f"http://{OUTSIDE_HOST}:{graph.port}/from-mallory"]
    fps = [os.urandom(16) for _ in real] + [fingerprint(victim), fingerprint(links[-1])]
    return PageResult(
        url=home,
        fp=bag.fps[0],
        final_url=home,
        status=200,
        fetched_at=time.time() + 10 * 365 * 86400,  # the latest fetch for ten years
        depth=bag.depths[0],
        data={"title": FORGED, "sku": FORGED},
        item_key=target_sku,  # another page's item
        links=links,
        link_fps=fps,
    )


def sku_of(graph: SiteGraph, url: str) -> str:
    return graph.expected_fields(url)["sku"]


def export_items(cluster: Cluster) -> dict[str, dict[str, Any]]:
    store = f"sqlite:///{cluster.store_path}"
    command = [sys.executable, "-m", "nadird", "export", "--items", "--store", store]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    items = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return {item["key"]: item for item in items}


def start_master(cluster: Cluster, graph: SiteGraph) -> Any:
    throttle = {"max_retry_after": REST, "max_crawl_delay": REST, "max_delay": REST}
    config = cluster.master_config(
        jobs=site_job(graph, item_key=["sku"]),
        seeds=graph.seeds(),
        master={"exit_when_done": False, "lease_ttl": 10},
        fetch={"throttle": throttle},
    )
    return cluster.start("master", "master", config)


def more_lies(graph: SiteGraph, bag: Bag) -> list[PageResult]:
    """A page at a made-up depth (its link would rank as a seed), and one not in the bag."""
    deeper = graph.url(host_of(bag.urls[0]), "/p/27")
    deep = PageResult(
        url=bag.urls[0], fp=bag.fps[0], final_url=bag.urls[0], status=200,
        fetched_at=time.time(), depth=-1, links=[deeper], link_fps=[fingerprint(deeper)],
    )  # fmt: skip
    other = next(u for u in graph.seeds() if u not in bag.urls)
    stray = PageResult(
        url=other, fp=fingerprint(other), final_url=other, status=200,
        fetched_at=time.time(), depth=0, data={"title": FORGED},
    )  # fmt: skip
    return [deep, stray]


def test_a_lying_worker_poisons_neither_the_seen_set_nor_the_store(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=3, pages=60)
    ctx = zmq.Context()
    with run_in_thread(graph, latency=0.01) as web:
        master = start_master(cluster, graph)
        forger = Forger(
            ctx, cluster.control, cluster.results, keys=local_member(cluster), key="worker"
        )
        bag = forger.take_a_bag()
        target = next(
            u for u in graph.all_pages() if "/p/" in u and graph.expected_fields(u)["sku"]
        )
        session = (bag.lease, bag.epoch, forger.node, forger.session)
        forger.push([lies(graph, bag, sku_of(graph, target))], *session)
        for page in more_lies(graph, bag):
            forger.push([page], *session)
        assert wait_until(lambda: cli(cluster, "status").get("rejected_item_keys") == 1, 30)
        # The URL whose fingerprint the forger sent is still new to the master.
        assert cli(cluster, "submit", graph.url(host_of(bag.urls[0]), "/p/7"))["admitted"] == 1
        # A rest of 1e12 s for its domain: cut to the longest a setting allows.
        forger._send(BagDone(node=forger.node, lease=bag.lease, epoch=bag.epoch, wait=1e12))
        forger._send(Bye(node=forger.node))
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert wait_until(lambda: cli(cluster, "status")["complete"], 90, interval=0.3)
        status = cli(cluster, "status")
        forger.close()
        master.kill(signal.SIGTERM)
        assert master.popen.wait(30) == 0
        entries = page_requests(web)
    ctx.term()
    assert_crawled_as_if_honest(graph, bag, entries)
    assert_counted(cluster, status, graph, bag)
    assert_store_unpoisoned(cluster, graph, bag, target)


def assert_crawled_as_if_honest(graph: SiteGraph, bag: Bag, entries: list[AccessEntry]) -> None:
    host = host_of(bag.urls[0])
    fetched = Counter(graph.canonical(f"http://{e.host}{e.path}") for e in entries)
    assert fetched[graph.url(host, "/p/7")] == 1 and fetched[graph.url(host, "/p/17")] == 1
    assert max(fetched.values()) == 1  # nothing admitted twice under two fingerprints
    assert not [e for e in entries if e.path in ("/from-mallory", "/p/27")]
    # The home page's real links came under made-up fingerprints: each crawled once.
    assert all(fetched[u] == 1 for u in graph.out_links(bag.urls[0]) if graph.in_site_scope(u))


def assert_counted(cluster: Cluster, status: dict[str, Any], graph: SiteGraph, bag: Bag) -> None:
    # Every link of the forger's counted once, by what decided it; none of
    # the honest worker's (its links are canonical, under their fingerprints).
    real = graph.out_links(bag.urls[0])
    out_of_scope = len([u for u in real if not graph.in_site_scope(u)])
    assert status["rejected_links"] == {
        "fingerprint": len(real) - out_of_scope + 1,  # its home page's links, the carrier
        "scope": out_of_scope + 1,  # outside.test and /private/ links, its own one
    }
    assert status["refused_results"] == {"depth": 1, "not_leased": 1}
    assert status["waits_capped"] == 1 and status["future_fetch_times"] == 1
    # Logged once per worker and reason, not once per link.
    lines = [e for e in cluster.proc("master").logs() if e["event"] == "links_rejected"]
    assert Counter((e["worker"], e["reason"]) for e in lines).most_common(1)[0][1] == 1


def assert_store_unpoisoned(cluster: Cluster, graph: SiteGraph, bag: Bag, target: str) -> None:
    """The forged page is stored as its holder sent it, but marked invalid;
    the item it named keeps the real page's fields."""
    records = {r.url: r for r in cluster.records()}
    forged = records[bag.urls[0]]
    assert forged.item_key == FORGED and forged.data["_valid"] is False
    assert forged.fetched_at <= time.time()
    items = export_items(cluster)
    real = graph.expected_fields(target)
    assert items[real["sku"]]["data"]["title"] == real["title"]
    assert all(item["data"].get("title") != FORGED for item in items.values())
    victim = graph.url(host_of(bag.urls[0]), "/p/7")
    assert records[victim].fp == fingerprint(victim)
