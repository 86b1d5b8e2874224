"""A worker stopped (SIGSTOP) with a request on its way, resumed once its
leases went to another worker: no request of it may reach the site beside
the new holder's. The server's access log is the judge.

Which of the resumed worker's parts runs first (its heartbeat loop, which
drops the bags, or the lane, whose request is refused at the send) is the
event loop's choice; tests/unit/worker/test_send_gate.py forces the second."""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import threading
from collections import defaultdict

import pytest
from aiohttp import web

from nadird.testing.checks import assert_exact_store, site_job
from nadird.testing.cluster import Cluster, worker_address
from nadird.testing.graph import SiteGraph
from nadird.testing.web import SyntheticWeb, run_in_thread

pytestmark = pytest.mark.slow

DELAY = 0.25
SLACK = 0.03  # two clock ticks of the arrival times (see test_polite_crawl.py)
STALL_BOUND = 20.0  # the stalled handler gives up waiting for the new holder after this


class StallingWeb:
    """Serves the graph; the first page w1 asks for once it crawls two hosts
    is answered in two halves, and in between w1 is stopped until w2 has
    fetched from that page's host since (its lease moved).

    w1 runs with one pooled connection: while that page is in flight, its
    other host's next request has passed its lease check and waits for the
    connection. The second half frees it, and w1 is resumed just after."""

    def __init__(self, web: SyntheticWeb) -> None:
        self.web = web
        self.pid = 0  # w1's, set once it runs
        self.stopped = threading.Event()
        self.resumed = threading.Event()
        self._w1_hosts: set[str] = set()
        self._w2_hosts: set[str] = set()
        web.add_route("/", self.serve)

    async def serve(self, request: web.Request, host: str) -> web.StreamResponse:
        client = request.remote
        if client == worker_address(2):
            self._w2_hosts.add(host)
        if client != worker_address(1) or request.path == "/robots.txt":
            return await self.web.serve_graph(request, host)
        self._w1_hosts.add(host)
        if self.stopped.is_set() or len(self._w1_hosts) < 2 or not self.pid:
            return await self.web.serve_graph(request, host)
        self.stopped.set()
        return await self._stall(request, host)

    async def _stall(self, request: web.Request, host: str) -> web.StreamResponse:
        page = self.web.graph.resource(host, request.path)
        response = web.StreamResponse(status=page.status)
        response.content_type = page.content_type
        response.content_length = len(page.body)
        await response.prepare(request)
        half = len(page.body) // 2
        await response.write(page.body[:half])
        await asyncio.sleep(2 * DELAY)  # the other lane is through its turn and check
        os.kill(self.pid, signal.SIGSTOP)
        # Only what w2 fetches from now on shows that w1's leases moved: a
        # host w2 took over from a bag w1 had finished before (w2 joins at
        # once when it starts quickly) is no takeover.
        self._w2_hosts.clear()
        try:
            for _ in range(int(STALL_BOUND / 0.01)):
                if host in self._w2_hosts:  # the stalled page's lease moved
                    break
                await asyncio.sleep(0.01)
            await response.write(page.body[half:])
            await asyncio.sleep(0.02)  # in w1's socket before it runs again
        finally:
            os.kill(self.pid, signal.SIGCONT)
            self.resumed.set()
        return response


def test_a_worker_stopped_on_its_way_to_send_sends_nothing_beside_the_new_holder(
    cluster: Cluster,
) -> None:
    graph = SiteGraph(hosts=2, pages=4)
    with run_in_thread(graph) as web:
        stalling = StallingWeb(web)
        config = cluster.master_config(
            jobs=site_job(graph), seeds=graph.seeds(), politeness={"delay": DELAY}
        )
        master = cluster.start("master", "master", config)
        w1 = cluster.start("worker", "w1", cluster.worker_config(1, pool_size=1))
        stalling.pid = w1.popen.pid
        assert stalling.stopped.wait(30)
        cluster.start("worker", "w2", cluster.worker_config(2))
        assert stalling.resumed.wait(STALL_BOUND + 10)
        assert cluster.wait(master, 90) == 0
        entries = web.entries()
    by_host = defaultdict(list)
    for entry in entries:
        by_host[entry.host].append(entry.arrived)
    both = {e.host for e in entries if e.client == worker_address(1)} & {
        e.host for e in entries if e.client == worker_address(2)
    }
    assert both, "w2 took over none of w1's hosts"
    for host, arrivals in by_host.items():
        gaps = [b - a for a, b in itertools.pairwise(sorted(arrivals))]
        assert min(gaps) >= DELAY - SLACK, (host, min(gaps))
    # (No check that requests never overlap: the stalled answer itself
    # stays open while w2 crawls its host.)
    assert_exact_store(cluster, graph)
    assert any(e.get("event") == "bags_dropped" for e in w1.logs())
