"""The master: sockets, the dispatch loop and the housekeeping loop.

The master never fetches. It admits fingerprints, leases domain bags to
workers that have credit, turns results into store records, and takes back
the URLs of leases whose worker went silent.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from pathlib import Path
from typing import Any

import zmq
import zmq.asyncio

from nadird.config import Config
from nadird.errors import InvalidURL, ProtocolError
from nadird.logs import get_logger
from nadird.master.admission import Admission
from nadird.master.frontier import Frontier
from nadird.master.leases import Lease, LeaseTable
from nadird.master.nodes import Node, NodeRegistry
from nadird.master.records import page_record
from nadird.master.seen import SeenSet
from nadird.master.writer import ResultWriter
from nadird.protocol.codec import decode, encode
from nadird.protocol.messages import (
    Bag,
    BagDone,
    Bye,
    Credit,
    Heartbeat,
    Hello,
    Message,
    Results,
    Shutdown,
    Welcome,
)
from nadird.store.base import Store
from nadird.urls import canonicalize, fingerprint

log = get_logger()
SEEN_FILE = "seen.bloom"


class Master:
    def __init__(self, config: Config, store: Store) -> None:
        self.config = config
        self.frontier = Frontier()
        self.leases = LeaseTable()
        self.nodes = NodeRegistry()
        self.seen = self._load_seen()
        self.admission = Admission(self.seen, self.frontier, dict(config.jobs))
        self.writer = ResultWriter(store, config.store.flush_size, config.store.flush_interval)
        self.stats: Counter[str] = Counter()
        self.done = asyncio.Event()
        self.control_endpoint = ""
        self.results_endpoint = ""
        self._wake = asyncio.Event()
        self._ctx: zmq.asyncio.Context | None = None
        self._router: zmq.asyncio.Socket | None = None
        self._pull: zmq.asyncio.Socket | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._last_snapshot = time.monotonic()

    # ----------------------------------------------------------- life cycle
    def _seen_path(self) -> Path:
        return Path(self.config.master.state_dir) / SEEN_FILE

    def _load_seen(self) -> SeenSet:
        path = self._seen_path()
        if path.exists():
            seen = SeenSet.load(path)
            log.info("seen_loaded", path=str(path), added=seen.added)
            return seen
        return SeenSet(self.config.bloom.expected_urls, self.config.bloom.fp_rate)

    async def start(self) -> None:
        self._ctx = zmq.asyncio.Context()
        self._router = self._ctx.socket(zmq.ROUTER)
        self._pull = self._ctx.socket(zmq.PULL)
        for sock in (self._router, self._pull):
            sock.setsockopt(zmq.LINGER, 1000)
        self._router.bind(self.config.master.bind)
        self._pull.bind(self.config.master.results_bind)
        self.control_endpoint = self._router.getsockopt_string(zmq.LAST_ENDPOINT)
        self.results_endpoint = self._pull.getsockopt_string(zmq.LAST_ENDPOINT)
        self.admit_seeds([(s.url, s.job) for s in self.config.seed_list()])
        self.writer.start()
        for coro, name in (
            (self._control_loop(), "control"),
            (self._results_loop(), "results"),
            (self._dispatch_loop(), "dispatch"),
            (self._housekeeping_loop(), "housekeeping"),
        ):
            self._tasks.append(asyncio.create_task(coro, name=name))
        log.info(
            "master_started",
            control=self.control_endpoint,
            results=self.results_endpoint,
            queued=self.frontier.queued,
        )

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._broadcast(Shutdown(reason="master stopping", done=self.done.is_set()))
        await self.writer.close()
        await asyncio.to_thread(self.seen.snapshot, self._seen_path())
        for sock in (self._router, self._pull):
            if sock is not None:
                sock.close()
        if self._ctx is not None:
            self._ctx.term()
        log.info("master_stopped", **self.status())

    # --------------------------------------------------------------- seeds
    def admit_seeds(self, seeds: list[tuple[str, str]]) -> int:
        added = 0
        for url, job in seeds:
            try:
                canonical = canonicalize(url)
            except InvalidURL as exc:
                self.stats["seeds_invalid"] += 1
                log.error("seed_invalid", url=url, error=str(exc))
                continue
            added += self.admission.admit(job, [canonical], [fingerprint(canonical)], 0)
        self._wake.set()
        return added

    # ------------------------------------------------------------- status
    def status(self) -> dict[str, Any]:
        return {
            "queued": self.frontier.queued,
            "leases": len(self.leases),
            "workers": len(self.nodes),
            "store_pending": self.writer.pending,
            "stored": self.writer.written,
            "seen": self.seen.added,
            "complete": self.is_complete(),
            **{k: v for k, v in sorted(self.stats.items())},
        }

    def is_complete(self) -> bool:
        return self.frontier.queued == 0 and len(self.leases) == 0 and self.writer.pending == 0

    # ------------------------------------------------------------ sockets
    async def _send(self, identity: bytes, msg: Message) -> None:
        assert self._router is not None
        await self._router.send_multipart([identity, encode(msg)])

    async def _broadcast(self, msg: Message) -> None:
        if self._router is None:
            return
        for node in self.nodes.all():
            with contextlib.suppress(zmq.ZMQError):
                await self._send(node.identity, msg)

    def _drop(self, reason: str, peer: str = "?") -> None:
        self.stats["dropped_messages"] += 1
        log.warning("message_dropped", peer=peer, reason=reason[:200])

    async def _control_loop(self) -> None:
        assert self._router is not None
        while True:
            frames = await self._router.recv_multipart()
            if len(frames) != 2:
                self._drop(f"expected 2 frames, got {len(frames)}")
                continue
            identity, payload = frames
            try:
                msg = decode(payload)
            except ProtocolError as exc:
                self._drop(str(exc), identity.hex())
                continue
            try:
                await self._on_control(identity, msg)
            except Exception:  # a handler bug must not stop the master
                self.stats["handler_errors"] += 1
                log.exception("control_handler_failed", kind=msg.KIND)

    async def _results_loop(self) -> None:
        assert self._pull is not None
        while True:
            payload = await self._pull.recv()
            try:
                msg = decode(payload)
            except ProtocolError as exc:
                self._drop(str(exc), "results")
                continue
            if not isinstance(msg, Results):
                self._drop(f"{msg.KIND} on the results socket", "results")
                continue
            try:
                self._on_results(msg)
            except Exception:
                self.stats["handler_errors"] += 1
                log.exception("results_handler_failed", node=msg.node)

    # ------------------------------------------------------------ control
    async def _on_control(self, identity: bytes, msg: Message) -> None:
        now = time.monotonic()
        if isinstance(msg, Hello):
            await self._on_hello(identity, msg, now)
            return
        node = self.nodes.by_identity(identity, now)
        if node is None or getattr(msg, "node", None) != node.node:
            self._drop(f"{msg.KIND} from an unregistered peer", identity.hex())
            return
        if isinstance(msg, Credit):
            node.credits = max(0, min(node.capacity, node.credits + msg.bags))
            self._wake.set()
        elif isinstance(msg, Heartbeat):
            node.inflight = msg.inflight
            self.leases.renew(node.node, msg.leases, now, self.config.master.lease_ttl)
        elif isinstance(msg, BagDone):
            self._on_bag_done(node, msg, now)
        elif isinstance(msg, Bye):
            self._forget_node(node, "bye")
        else:
            self._drop(f"unexpected {msg.KIND} from a worker", node.node)

    async def _on_hello(self, identity: bytes, msg: Hello, now: float) -> None:
        previous = self.nodes.register(identity, msg, now)
        if previous is not None:
            # The same worker restarted: whatever its old process held is lost.
            self._reclaim(self.leases.of_node(msg.node), now, "worker restarted")
        log.info("worker_joined", worker=msg.node, capacity=msg.capacity, pid=msg.pid)
        master = self.config.master
        await self._send(identity, Welcome(msg.node, master.heartbeat_interval, master.lease_ttl))

    def _on_bag_done(self, node: Node, msg: BagDone, now: float) -> None:
        lease = self.leases.current(msg.lease, msg.epoch)
        if lease is None or lease.node != node.node:
            self.stats["stale_bag_done"] += 1
            return
        lease.done = True
        lease.wait = max(0.0, msg.wait)
        for fp in msg.returned:
            entry = lease.pending.pop(fp, None)
            if entry is not None:
                lease.returned.append(entry)
        self._close_if_finished(lease, now)

    def _close_if_finished(self, lease: Lease, now: float) -> None:
        if not (lease.done and not lease.pending):
            return
        self.leases.remove(lease)
        self.frontier.release(lease.domain, now + lease.wait, lease.returned)
        self.stats["bags_done"] += 1
        self._wake.set()

    def _reclaim(self, leases: list[Lease], now: float, why: str) -> None:
        for lease in leases:
            self.leases.remove(lease)
            back = lease.returned + list(lease.pending.values())
            self.frontier.release(lease.domain, now + lease.wait, back)
            self.stats["leases_reclaimed"] += 1
            log.info(
                "lease_reclaimed",
                lease=lease.id,
                domain=lease.domain,
                worker=lease.node,
                urls=len(back),
                why=why,
            )
        if leases:
            self._wake.set()

    def _forget_node(self, node: Node, why: str) -> None:
        self.nodes.remove(node)
        self._reclaim(self.leases.of_node(node.node), time.monotonic(), why)
        log.info("worker_left", worker=node.node, why=why)

    # ------------------------------------------------------------ results
    def _on_results(self, msg: Results) -> None:
        lease = self.leases.current(msg.lease, msg.epoch)
        if lease is not None and lease.node != msg.node:
            self._drop("results for another worker's lease", msg.node)
            return
        if lease is None:
            # Late result of an expired lease: stored idempotently, frontier untouched.
            self.stats["late_results"] += len(msg.pages)
        records = []
        for page in msg.pages:
            records.append(page_record(page, msg.job, msg.node))
            self.stats["pages_error" if page.error else "pages_ok"] += 1
            if page.links:
                self.admission.admit(msg.job, page.links, page.link_fps, page.depth + 1)
            if lease is not None:
                lease.pending.pop(page.fp, None)
        self.writer.add(records)
        if lease is not None:
            self._close_if_finished(lease, time.monotonic())
        self._wake.set()

    # ----------------------------------------------------------- dispatch
    async def _dispatch_loop(self) -> None:
        while True:
            await self._dispatch_ready()
            timeout: float | None = None
            ready_at = self.frontier.next_ready_at()
            if ready_at is not None and self.nodes.with_credits():
                timeout = max(0.0, ready_at - time.monotonic())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout)
            self._wake.clear()

    async def _dispatch_ready(self) -> None:
        nodes = self.nodes.with_credits()
        now = time.monotonic()
        while nodes:
            dq = self.frontier.pop_ready(now)
            if dq is None:
                return
            node = max(nodes, key=lambda n: n.credits)
            master = self.config.master
            entries = self.frontier.take(dq, master.bag_size)
            lease = self.leases.grant(dq.name, node.node, entries, now, master.lease_ttl)
            node.credits -= 1
            if node.credits == 0:
                nodes.remove(node)
            await self._send(node.identity, self._bag(lease))
            self.stats["bags_leased"] += 1

    def _bag(self, lease: Lease) -> Bag:
        job = self.admission.jobs[lease.job]
        politeness = self.config.politeness
        entries = list(lease.pending.values())
        return Bag(
            lease=lease.id,
            epoch=lease.epoch,
            domain=lease.domain,
            job=job.to_wire(),
            urls=[e.url for e in entries],
            fps=[e.fp for e in entries],
            depths=[e.depth for e in entries],
            delay=job.delay if job.delay is not None else politeness.delay,
            domain_concurrency=job.domain_concurrency or politeness.domain_concurrency,
            ttl=self.config.master.lease_ttl,
        )

    # -------------------------------------------------------- housekeeping
    async def _housekeeping_loop(self) -> None:
        master = self.config.master
        tick = min(1.0, master.lease_ttl / 4)
        while True:
            await asyncio.sleep(tick)
            now = time.monotonic()
            expired = self.leases.expired(now)
            self.stats["leases_expired"] += len(expired)
            self._reclaim(expired, now, "lease expired")
            for node in self.nodes.silent(now, master.lease_ttl):
                self._forget_node(node, "silent")
            if now - self._last_snapshot >= master.snapshot_interval:
                self._last_snapshot = now
                await self._snapshot()
            self._check_complete()

    async def _snapshot(self) -> None:
        try:
            await asyncio.to_thread(self.seen.snapshot, self._seen_path())
        except OSError as exc:
            # The previous snapshot is intact (atomic rename); keep crawling.
            log.error("snapshot_failed", path=str(self._seen_path()), error=str(exc))

    def _check_complete(self) -> None:
        if self.done.is_set() or not self.is_complete():
            return
        log.info("crawl_complete", **self.status())
        self.done.set()
