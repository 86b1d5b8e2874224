"""Crawling one bag: robots.txt first, at most `domain_concurrency` requests in
flight for the domain, and at least the effective delay between the starts of
two requests (see fetch/throttle.py), robots.txt and sitemap fetches included.

A 429/503 (or an unreachable robots.txt) stops the bag at once: that URL and
the ones not started go back to the master in BagDone.returned, and
BagDone.wait tells it how long the domain must rest, so no worker asks
before then.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from nadird.common.errors import ErrorKind, FetchError
from nadird.common.logs import get_logger
from nadird.common.urls import fingerprint, origin_of
from nadird.protocol.messages import PageResult
from nadird.worker.fetch.login_sessions import BagSessions, LoginFailed
from nadird.worker.fetch.robots import RobotsCache, RobotsRules
from nadird.worker.fetch.send_gate import SendRefused, guard
from nadird.worker.fetch.sitemaps import SitemapReader
from nadird.worker.fetch.throttle import Pacer, parse_retry_after
from nadird.worker.follow.filter import LinkPipeline
from nadird.worker.pages import PageProcessor, PageTask, Processed, error_result

__all__ = ["BagRun", "Pacer", "RobotsGate", "SitemapHook", "crawl_bag"]

log = get_logger()

ROBOTS_DISALLOWED = FetchError(ErrorKind.ROBOTS, "disallowed")
FENCE_POLL = 0.05


@dataclass
class BagRun:
    tasks: deque[PageTask]
    concurrency: int
    pacer: Pacer
    stopping: bool = False
    dropped: bool = False  # fenced: the lease is no longer ours, report nothing
    returned: list[bytes] = field(default_factory=list)
    # Handed back because the server said 429/503: the master counts these
    # as attempts, so a site that always says so ends in dead letters.
    throttled: list[bytes] = field(default_factory=list)
    # True once the worker may have lost its leases (no heartbeat answer for
    # a lease period): then no new request may start under this lease.
    fenced: Callable[[], bool] | None = None
    sessions: BagSessions | None = None  # a job with a login: reported in BagDone
    # The Welcome.session its results carry (a new master that adopts the
    # lease hands out a new one).
    token: bytes = b""
    # Every result sent or kept, by fingerprint: a master that adopts the
    # lease after a crash asks again for those it did not store.
    sent: dict[bytes, PageResult] = field(default_factory=dict)

    def stop(self) -> None:
        """Take no new URL; the ones not started are handed back."""
        self.stopping = True

    async def unfenced(self) -> None:
        """Wait while the worker may have lost its leases. The agent's
        heartbeat loop either gets an answer (and this returns) or drops the
        bag (and cancels this task); meanwhile no request starts."""
        while self.fenced is not None and self.fenced():
            await asyncio.sleep(FENCE_POLL)

    def hand_back(self, task: PageTask) -> None:
        self.returned.append(task.fp)


class RobotsGate:
    """robots.txt as one bag sees it: fetched through the bag's pacer, and
    its Crawl-delay applied to the domain's pace."""

    def __init__(
        self,
        cache: RobotsCache,
        pacer: Pacer,
        max_crawl_delay: float,
        use_proxy: bool = True,
    ) -> None:
        self.cache = cache
        self.token = cache.config.user_agent
        self._pacer = pacer
        self._max_crawl_delay = max_crawl_delay
        self._use_proxy = use_proxy

    async def rules(self, url: str) -> RobotsRules:
        rules = await self.cache.rules(url, self._pacer.turn, self._use_proxy)
        delay = rules.delay(self.token)
        if delay is not None and delay > 0:
            state = self._pacer.state
            state.crawl_delay = max(state.crawl_delay, min(delay, self._max_crawl_delay))
        return rules

    async def hop_check(self, url: str) -> None:
        """Refuse a redirect to a URL robots.txt disallows (any host)."""
        rules = self.cache.cached(url) or await self.cache.rules(url, None, self._use_proxy)
        if rules.verdict in ("rules", "unreachable") and not rules.allows(url, self.token):
            raise FetchError(ErrorKind.ROBOTS, f"disallowed (redirect to {url[:200]})")


class SitemapHook:
    """Adds a host's sitemap URLs to the first result of that host (per worker, per ttl).

    With `as_hubs` (jobs with `feeds:`) the sitemaps robots.txt lists are
    themselves the links: each is then fetched, read and revisited as a hub
    like a feed, instead of read once here.
    """

    def __init__(
        self,
        reader: SitemapReader,
        robots: RobotsCache | None,
        links: LinkPipeline,
        pacer: Pacer,
        use_proxy: bool = True,
        as_hubs: bool = False,
    ) -> None:
        self._as_hubs = as_hubs
        self._reader = reader
        self._robots = robots
        self._links = links
        self._pacer = pacer
        self._use_proxy = use_proxy
        self._claimed: list[str] = []  # origins whose sitemaps this bag's results carry

    def release(self) -> None:
        """The bag was dropped: what its results carried may be lost with
        them (a master that took the lease back refuses them), so the next
        bag of these hosts attaches their sitemaps again."""
        for origin in self._claimed:
            self._reader.release(origin)
        self._claimed.clear()

    async def attach(self, result: PageResult, follows: bool) -> PageResult:
        origin = origin_of(result.url)
        if not follows or not self._reader.claim(origin):
            return result
        self._claimed.append(origin)
        rules = self._robots.cached(result.url) if self._robots is not None else None
        listed = rules.sitemaps() if rules is not None else []
        if self._as_hubs:  # robots.txt lists them
            found = [(f"{origin}/robots.txt", listed)] if listed else []
        else:
            reader = self._reader
            found = await reader.by_sitemap(origin, listed, self._pacer.turn, self._use_proxy)
        have = {result.url, *result.links}
        extra: list[str] = []
        vias: list[str] = []  # where each was read (the archive's `via`)
        for source, raw in found:
            new = [u for u in self._links.follow_raw(raw, result.url) if u not in have]
            have.update(new)
            extra += new
            vias += [source] * len(new)
        if not extra:
            return result
        requests = result.link_requests
        return dataclasses.replace(
            result,
            links=[*result.links, *extra],
            link_fps=[*result.link_fps, *(fingerprint(u) for u in extra)],
            link_requests=[*requests, *[None] * len(extra)] if requests else [],
            link_vias=[*(result.link_vias or [""] * len(result.links)), *vias],
        )


async def _robots_allow(
    robots: RobotsGate, run: BagRun, task: PageTask, emit: Callable[[PageResult], None]
) -> bool:
    """Whether robots.txt lets the task be fetched; if not, its result was
    emitted or (robots.txt unreachable) it went back with the bag."""
    started = time.time()
    rules = await robots.rules(task.url)
    if rules.verdict == "unreachable":
        # RFC 9309: assume complete disallow for now; try again later.
        run.hand_back(task)
        run.pacer.hold(robots.cache.config.error_ttl)
        run.stop()
        return False
    if rules.failure is not None:  # verdict "failed": the page gets that error (robots.page_error)
        emit(error_result(task, started, rules.failure))
        return False
    if not rules.allows(task.url, robots.token):
        emit(error_result(task, started, ROBOTS_DISALLOWED))
        return False
    return True


def _throttled(run: BagRun, task: PageTask, processed: Processed) -> None:
    """A 429/503: the task and the rest of the bag go back, the domain waits."""
    wait = run.pacer.throttled(parse_retry_after(processed.retry_after))
    log.info("domain_throttled", url=task.url, status=processed.status, wait=wait)
    run.hand_back(task)
    run.throttled.append(task.fp)
    run.stop()


async def crawl_bag(
    run: BagRun,
    processor: PageProcessor,
    emit: Callable[[PageResult], None],
    robots: RobotsGate | None = None,
    sitemaps: SitemapHook | None = None,
) -> None:
    async def one(task: PageTask) -> None:
        try:
            await fetched(task)
        except SendRefused:
            # The lease may have gone while this lane was on its way (a
            # stopped process): the task waits at the front until the
            # heartbeat loop gets an answer, or drops the bag.
            log.warning("request_withheld", url=task.url, why="fenced at send")
            run.tasks.appendleft(task)
            await run.unfenced()

    async def fetched(task: PageTask) -> None:
        if robots is not None and not await _robots_allow(robots, run, task, emit):
            return
        await run.pacer.turn()
        await run.unfenced()
        if run.stopping:  # a 429 came in while this lane waited its turn
            run.hand_back(task)
            return
        try:
            processed = await processor.process(task)
        except LoginFailed:  # no session for anyone: the bag goes back
            run.hand_back(task)
            run.stop()
            return
        if processed.result is None:
            _throttled(run, task, processed)
            return
        run.pacer.served()
        if processed.latency is not None or processed.strained:
            run.pacer.observe(processed.latency or 0.0, processed.strained)
        result = processed.result
        if sitemaps is not None:
            result = await sitemaps.attach(result, processor.follows(task.depth))
        emit(result)

    async def lane() -> None:
        guard(run.fenced)  # checked again as each request leaves (send_gate.py)
        while run.tasks and not run.stopping:
            await one(run.tasks.popleft())

    lanes = max(1, min(run.concurrency, len(run.tasks)))
    await asyncio.gather(*(lane() for _ in range(lanes)))
    run.returned.extend(task.fp for task in run.tasks)
    run.tasks.clear()
