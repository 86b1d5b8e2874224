"""The worker's main loop: register, ask for bags with credits, crawl, report.

The protocol's decisions are worker/core.py's; this is the I/O around them:
the sockets, the loops, the bags' tasks and what crawls them.

The worker holds no state worth keeping: kill it at any moment and the master
re-leases what it held once the lease expires (or at once when it restarts
under the same node name).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections import deque
from functools import partial
from typing import Any

import zmq
import zmq.asyncio

from nadird import __version__
from nadird.common.errors import ProtocolError
from nadird.common.logs import get_logger
from nadird.common.urls import origin_of
from nadird.common.waits import wait_set
from nadird.config import Config
from nadird.job.request import RequestSpec
from nadird.job.spec import Job
from nadird.protocol.codec import decode, encode
from nadird.protocol.curve import secure_client
from nadird.protocol.local_keys import secure_local
from nadird.protocol.messages import Bag, BagDone, Bye, Hello, Message, PageResult
from nadird.worker.bag import BagRun, RobotsGate, SitemapHook, crawl_bag
from nadird.worker.core import (
    Action,
    Cancel,
    Exit,
    Load,
    Resend,
    Send,
    Start,
    Welcomed,
    WorkerCore,
)
from nadird.worker.fetch.cookies import CookieJars
from nadird.worker.fetch.fetcher import Fetcher
from nadird.worker.fetch.login_sessions import BagSessions, SecretReader
from nadird.worker.fetch.proxies import proxy_capabilities
from nadird.worker.fetch.robots import RobotsCache
from nadird.worker.fetch.sitemaps import SitemapReader
from nadird.worker.fetch.throttle import DomainPaces, Pacer
from nadird.worker.follow.filter import DomainCounts, LinkPipeline, ReportedLinks
from nadird.worker.load import LoadMeter
from nadird.worker.masters import Endpoint, MasterChoice
from nadird.worker.page_log import page_crawled
from nadird.worker.pages import PageProcessor, PageTask
from nadird.worker.render.step import RenderStep, new_renderer
from nadird.worker.render.subrequests import SubrequestPolicy
from nadird.worker.service.health import MasterLink, WorkStats, health
from nadird.worker.service.http import WorkerHttp
from nadird.worker.service.peer_watch import PeerWatch
from nadird.worker.service.sender import ResultSender
from nadird.worker.service.stopping import (
    close_sockets,
    end_bags,
    master_there,
    set_lingers,
    term_off_loop,
)

log = get_logger()


class WorkerAgent:
    def __init__(self, config: Config, source: str = "(config)") -> None:
        self.config = config
        self.node = config.node
        self.fetcher = Fetcher(config.fetch, source)
        # A headless browser when worker.capabilities has "javascript"
        # (ConfigError here if this host cannot run one).
        self.renderer = new_renderer(config)
        # Per-worker caches shared by all bags: what one bag of a host learnt
        # (robots.txt, pace, sitemaps read, pages fetched) the next one reuses.
        self.robots = RobotsCache(self.fetcher, config.fetch.robots)
        self.domains = DomainPaces(config.fetch.throttle)
        self.sitemaps = SitemapReader(self.fetcher, config.fetch.sitemaps, config.fetch.robots.ttl)
        self.page_counts = DomainCounts()
        self.cookies = CookieJars(config.fetch.cookie_jars)  # per (job, domain): a cache
        self.secrets = SecretReader()  # login users and passwords, read when first needed
        self.finished = asyncio.Event()
        keys = bool(config.security.worker_secret_key)
        self.masters = MasterChoice(
            config.worker.endpoints(), config.worker.master_timeout, time.monotonic()
        )
        self.link = MasterLink(self.masters.current[0], config.worker.unreachable_after, keys)
        self.stats = WorkStats()
        self.core = WorkerCore(
            self._hello_template(),
            config.worker.exit_when_done,
            time.monotonic(),
            config.worker.keep_dropped_periods,
        )
        self._tasks: dict[str, asyncio.Task[None]] = {}  # the running bags', by lease
        self._hb_wake = asyncio.Event()
        self._load = LoadMeter()
        self._ctx = zmq.asyncio.Context()
        self._dealer = self._ctx.socket(zmq.DEALER)
        self._push = self._ctx.socket(zmq.PUSH)
        self._sender = ResultSender(
            self._push, self.node, config.worker.result_batch, config.worker.result_flush_interval
        )
        self._loops: list[asyncio.Task[None]] = []
        self._connected = False
        # A live connection to the master (masters.py, stopping.py).
        self._peers: PeerWatch | None = None
        for sock in (self._dealer, self._push):
            # Here, not in run(): a bad key file is a config error (exit 2).
            secure_client(sock, config, source)
        http = config.worker.http
        self.http = WorkerHttp(http, self.health) if http.enabled else None

    def apply_config(self, config: Config) -> None:
        """Take a reloaded config; bags started from now on use it."""
        self.config = config
        self.fetcher.config = config.fetch
        self.robots.config = config.fetch.robots
        self.domains.config = config.fetch.throttle
        self.cookies.config = config.fetch.cookie_jars

    async def run(self, stop: asyncio.Event) -> None:
        set_lingers(self._dealer, self._push)
        self._push.setsockopt(zmq.SNDHWM, 100_000)
        if self.renderer is not None:
            await self.renderer.start()  # before any bag: fail fast without a browser
        await self.fetcher.start()
        self._sender.start()
        self._loops = [asyncio.create_task(self._link_loop(), name="link")]
        self._peers = PeerWatch(self._dealer)
        # On this host without keys configured: the keys the master makes
        # when it starts (till then the link loop says the master is away).
        if await secure_local(self.config, (self._dealer, self._push), stop):
            self._connect(self.masters.current)
            await self._hello()
            self._loops.append(asyncio.create_task(self._recv_loop(), name="recv"))
            self._loops.append(asyncio.create_task(self._heartbeat_loop(), name="heartbeat"))
        stopper = asyncio.create_task(stop.wait())
        finisher = asyncio.create_task(self.finished.wait())
        await asyncio.wait({stopper, finisher}, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        finisher.cancel()
        await self._shutdown()

    async def _shutdown(self) -> None:
        """Hand the bags back and close (stopping.py: at once when the
        master is gone, nothing would read what is left to send)."""
        for _bag, run in self.core.bags.values():
            run.stop()
        drain = self.config.fetch.total_timeout
        await end_bags(list(self._tasks.values()), self._master_there(), drain)
        for loop in self._loops:
            loop.cancel()
        await self._sender.close()
        there = self._master_there()
        # NOBLOCK: with no master connected (it refused our keys) it would wait
        # for ever; a socket never connected would too.
        if self._connected and there:
            with contextlib.suppress(zmq.ZMQError):
                await self._dealer.send(encode(Bye(node=self.node)), flags=zmq.NOBLOCK)
        if self.renderer is not None:
            await self.renderer.close()
        await self.fetcher.close()
        if self._peers is not None:
            self._peers.stop()
        close_sockets(self._dealer, self._push, there)
        await term_off_loop(self._ctx)
        if self.http is not None:
            await self.http.stop()
        log.info("worker_stopped", pages=self._sender.sent_pages, master_gone=not there)

    def _master_there(self) -> bool:
        now = time.monotonic()
        return master_there(self._live(), self.link.silent_for(now), self.core.heartbeat_interval)

    def health(self) -> dict[str, Any]:
        fetcher = self.fetcher
        pool = None
        if fetcher.proxies.configured:
            pool = {**fetcher.proxies.describe(), "providers": fetcher.feeds.describe()}
        return health(self.node, self.link, self.stats, len(self.core.bags), pool)

    async def _link_loop(self) -> None:
        """Say so in the log when the master stays silent (see health.py);
        give it up for the next one listed when it stays so (masters.py)."""
        tick = min(1.0, self.link.warn_after / 2, self.masters.timeout / 4)
        while True:
            await asyncio.sleep(tick)
            now = time.monotonic()
            if self.link.due(now):
                await self.link.warn(now)
            if self._connected and self.masters.give_up(now, self.link.last_heard, self._live()):
                await self._switch(now)

    def _live(self) -> bool:
        return self._peers is not None and self._peers.is_up()

    def _connect(self, endpoint: Endpoint) -> None:
        self._dealer.connect(endpoint[0])
        self._push.connect(endpoint[1])
        self._connected = True

    async def _switch(self, now: float) -> None:
        """Leave the silent master before joining the next: never two at once.
        Its bags are kept for the next one to adopt (a restored master
        knows their leases), as after a master's restart."""
        old = self.masters.current
        new = self.masters.next(now)
        log.warning(
            "master_switched", left=old[0], to=new[0], silent_s=round(now - self.link.last_heard, 1)
        )
        await self._apply(self.core.drop_bags(f"master {old[0]} silent", now))
        for sock, address in zip((self._dealer, self._push), old, strict=True):
            with contextlib.suppress(zmq.ZMQError):  # not connected yet (refused keys)
                sock.disconnect(address)
        if self._peers is not None:
            self._peers.forget(old[0])
        self._connect(new)
        self.link.endpoint = new[0]
        await self._hello()

    async def _send(self, msg: Message) -> None:
        await self._dealer.send(encode(msg))

    async def _hello(self) -> None:
        await self._send(self.core.say_hello())

    def _hello_template(self) -> Hello:
        worker = self.config.worker
        return Hello(
            node=self.node,
            capacity=worker.bags,
            group=worker.group,
            capabilities=[*worker.capabilities, *proxy_capabilities(self.config.fetch.proxies)],
            pid=os.getpid(),
            version=__version__,
            host=socket.gethostname(),
        )

    async def _heartbeat_loop(self) -> None:
        while True:
            # Woken early by a Welcome: its interval may be shorter than ours.
            await wait_set(self._hb_wake, self.core.heartbeat_interval)
            self._hb_wake.clear()
            await self._apply(self.core.tick(time.monotonic(), self._measure))

    def _measure(self) -> Load:
        usable = self.fetcher.proxies.usable()
        return Load(self._load.cpu_percent(), self._load.rss_mb(), usable)

    def _fenced(self) -> bool:
        return self.core.fenced(time.monotonic())

    async def _recv_loop(self) -> None:
        while True:
            frame = await self._dealer.recv()
            try:
                msg = decode(frame)
            except ProtocolError as exc:
                log.warning("message_dropped", peer="master", reason=str(exc))
                continue
            now = time.monotonic()
            self.link.heard(now)
            await self._apply(self.core.on_message(msg, now))

    async def _apply(self, actions: list[Action]) -> None:
        """Carry out what the core decided, in its order."""
        self.link.registered = self.core.registered  # the link reports it
        for action in actions:
            if isinstance(action, Send):
                await self._send(action.msg)
            elif isinstance(action, Start):
                self._start_bag(action.bag, action.sent)
            elif isinstance(action, Cancel):
                task = self._tasks.pop(action.lease, None)
                if task is not None:
                    task.cancel()
            elif isinstance(action, Resend):
                for page in action.pages:
                    self._sender.add(action.lease, action.epoch, action.job, action.session, page)
                self._sender.flush(action.lease)
            elif isinstance(action, Welcomed):
                self.link.welcomed(action.at)
                self._hb_wake.set()
            elif isinstance(action, Exit):
                self.finished.set()

    def _start_bag(self, bag: Bag, sent: dict[bytes, PageResult] | None = None) -> None:
        self.robots.prime(bag.robots)
        try:
            job = Job.from_wire(bag.job)
        except (TypeError, ValueError) as exc:
            log.error("bag_rejected", lease=bag.lease, error=str(exc))
            job = None
        rows = bag.rows or [0] * len(bag.urls)
        validators = bag.validators or [["", ""]] * len(bag.urls)
        requests = bag.requests or [None] * len(bag.urls)
        tasks = deque(
            PageTask(u, f, d, r, etag, modified, RequestSpec.from_wire(u, q) if q else None)
            for u, f, d, r, (etag, modified), q in zip(
                bag.urls, bag.fps, bag.depths, rows, validators, requests, strict=True
            )
        )
        pacer = Pacer(bag.delay, self.domains.get(bag.domain), self.config.fetch.throttle)
        run = BagRun(
            tasks, bag.domain_concurrency, pacer, fenced=self._fenced, token=self.core.session
        )
        run.sent.update(sent or {})  # an adopted bag's results from before
        if job is None:
            run.stop()
        crawl = self._crawl(bag, job, run)
        self._tasks[bag.lease] = asyncio.create_task(crawl, name=f"bag-{bag.lease}")
        self.core.started(bag, run)

    async def _crawl_job(self, bag: Bag, job: Job, run: BagRun) -> None:
        fetch = self.config.fetch
        links = LinkPipeline(job, fetch, self.page_counts)
        gate = None
        if job.robots:
            gate = RobotsGate(self.robots, run.pacer, fetch.throttle.max_crawl_delay, job.proxies)
        hook = None
        if job.sitemaps or job.feeds:
            robots = self.robots if job.robots else None
            hubs = bool(job.feeds)
            hook = SitemapHook(self.sitemaps, robots, links, run.pacer, job.proxies, hubs)
        hop_check = gate.hop_check if gate is not None else None
        render = None
        if job.render is not False:
            cache = self.renderer.cache if self.renderer is not None else None
            policy = SubrequestPolicy(
                self.fetcher, job, fetch.render, bag.domain, run.pacer.turn, hop_check, cache,
                bag.archive,
            )  # fmt: skip
            render = RenderStep(self.renderer, job, policy, fetch)
        sticky = bag.lease if job.proxy_sticky == "bag" else None
        sessions = None
        jar = self.cookies.jar(job.name, bag.domain) if job.cookie_jar else None
        if job.login is not None:
            where = {"job": job.name, "domain": bag.domain}
            jars = partial(self.cookies.jar, job.name, bag.domain) if job.cookie_jar else None
            run.sessions = sessions = BagSessions(
                job.login, bag.sessions, self.fetcher, self.secrets, run.pacer.turn, where,
                job.proxies, jars,
            )  # fmt: skip
        processor = PageProcessor(
            self.fetcher, job, fetch, links, hop_check, render, sticky, sessions, jar, bag.archive
        )
        reported = ReportedLinks()
        attempts = dict(zip(bag.fps, bag.attempts, strict=True)) if bag.attempts else {}

        def emit(page: PageResult) -> None:
            self.stats.page(page)
            if page.status:
                self.page_counts.add(job.name, bag.domain)
            attempt = attempts.get(page.fp, 1)
            page_crawled(self.config.log_pages, page, bag.lease, bag.domain, attempt)
            sent = run.sent[page.fp] = reported.new_only(page)
            self._sender.add(bag.lease, bag.epoch, job.name, run.token, sent)

        try:
            await crawl_bag(run, processor, emit, gate, hook)
        finally:
            if run.dropped and hook is not None:
                hook.release()

    async def _crawl(self, bag: Bag, job: Job | None, run: BagRun) -> None:
        try:
            if job is not None:
                await self._crawl_job(bag, job, run)
            else:
                run.returned.extend(bag.fps)
        except Exception:
            log.exception("bag_failed", lease=bag.lease, domain=bag.domain)
            run.returned.extend(t.fp for t in run.tasks)
        finally:
            self._sender.flush(bag.lease)
            self.core.ended(bag, run)
            if self._tasks.get(bag.lease) is asyncio.current_task():  # not a resumed one
                del self._tasks[bag.lease]
            self.fetcher.proxies.release(bag.lease)
        if not run.dropped:
            login = run.sessions
            done = BagDone(
                node=self.node, lease=bag.lease, epoch=bag.epoch, returned=run.returned,
                throttled=run.throttled, wait=run.pacer.rest(),
                robots=self.robots.shareable({origin_of(u) for u in bag.urls}),
                sessions=login.notes() if login is not None else [],
                login_failures=login.failures if login is not None else 0,
                login_error=login.error if login is not None else "",
            )  # fmt: skip
            await self._apply(self.core.finished(bag, run, done, time.monotonic()))
