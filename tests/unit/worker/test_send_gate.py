"""The lease is looked at again as each request leaves (send_gate.py): a
process stopped after its lane's check sends nothing once resumed if its
lease may have gone meanwhile. The server's access log says what was sent."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable

import aiohttp
import pytest
from support.hostile_helpers import fetch_config, hostile_web, url

from nadird.common.urls import fingerprint
from nadird.config import ThrottleConfig
from nadird.job.spec import Job
from nadird.protocol.messages import Hello, PageResult
from nadird.worker.bag import BagRun, RobotsGate, crawl_bag
from nadird.worker.core import FENCE_SHARE, WorkerCore
from nadird.worker.fetch.fetcher import Fetcher
from nadird.worker.fetch.resolver import PolicyResolver, ResolveResult
from nadird.worker.fetch.robots import RobotsCache
from nadird.worker.fetch.throttle import DomainPace, Pacer
from nadird.worker.follow.filter import DomainCounts, LinkPipeline
from nadird.worker.pages import PageProcessor, PageTask

LEASE_TTL = 1.0  # long enough for the lane's first check on a loaded machine
STALL = LEASE_TTL  # longer than the fence's share of the lease period


class StallingResolver(PolicyResolver):
    """Blocks the whole process once while a connection is being made: what
    a SIGSTOP there looks like to the event loop, the clock moved on."""

    stalls = 1

    async def resolve(self, *args: object, **kwargs: object) -> list[ResolveResult]:
        if self.stalls:
            self.stalls -= 1
            time.sleep(STALL)
        return await super().resolve(*args, **kwargs)  # type: ignore[arg-type]


class StallingFetcher(Fetcher):
    def _connector(self) -> aiohttp.TCPConnector:
        self._resolver = StallingResolver(self.config.resolve, self.policy)
        return super()._connector()


async def until(condition: Callable[[], bool], bound: float = 5.0) -> bool:
    for _ in range(int(bound / 0.005)):
        if condition():
            return True
        await asyncio.sleep(0.005)
    return False


@pytest.mark.parametrize("robots", [False, True])  # with robots.txt: the first request
async def test_a_request_whose_lease_lapsed_on_its_way_waits_and_goes_once_renewed(
    robots: bool,
) -> None:
    assert STALL > LEASE_TTL * FENCE_SHARE
    core = WorkerCore(Hello(node="w1", capacity=1), False, time.monotonic())
    core.lease_ttl = LEASE_TTL
    with hostile_web() as (web, hostile):
        hostile.add_host("s.test")
        hostile.add_html("s.test", "/a")
        page = url(web, "s.test", "/a")
        cfg = fetch_config()
        client = StallingFetcher(cfg)
        await client.start()
        try:
            job = Job(robots=robots)
            pacer = Pacer(0.0, DomainPace(adaptive=0.0), ThrottleConfig(adaptive=False))
            task = PageTask(page, fingerprint(page), 0)
            run = BagRun(deque([task]), 1, pacer, fenced=lambda: core.fenced(time.monotonic()))
            processor = PageProcessor(client, job, cfg, LinkPipeline(job, cfg, DomainCounts()))
            gate = RobotsGate(RobotsCache(client, cfg.robots), pacer, 10.0) if robots else None
            results: list[PageResult] = []
            core.last_ack = time.monotonic()  # a heartbeat was just answered
            crawl = asyncio.create_task(crawl_bag(run, processor, results.append, gate))
            # The lane takes the task, passes its check, stalls, is refused
            # at the send and puts the task back.
            assert await until(lambda: not run.tasks) and await until(lambda: bool(run.tasks))
            await asyncio.sleep(0.1)  # and waits: nothing more is tried
            assert list(run.tasks) == [task] and not crawl.done()
            assert [e.path for e in web.entries()] == []
            core.last_ack = time.monotonic()  # the master answered a heartbeat again
            await asyncio.wait_for(crawl, 5)
        finally:
            await client.close()
        assert [e.path for e in web.entries()] == ["/robots.txt", "/a"][not robots :]
    assert [r.status for r in results] == [200] and run.returned == []
