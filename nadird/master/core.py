"""The master's state machine, without sockets.

Every handler takes a decoded message and returns the messages to send as
(identity, message) pairs; the server does the I/O. Keeping the decisions here
makes them testable without ZeroMQ and keeps the server a thin loop.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from nadird.common.logs import PerKeyLimit, gate, get_logger
from nadird.common.urls import domain_of
from nadird.config import Config
from nadird.master.frontier.admission import Admission, LinkBatch, Source, links_of
from nadird.master.frontier.queues import Caps, Frontier
from nadird.master.frontier.seen import SeenSet
from nadird.master.job_control import JobControl
from nadird.master.leasing.acceptance import REASONS, refusal
from nadird.master.leasing.adoption import Adoption
from nadird.master.leasing.closing import LeaseCloser
from nadird.master.leasing.dispatch import Dispatcher, Outgoing
from nadird.master.leasing.lease_mark import LeaseMark, headroom_of, recovery_hold
from nadird.master.leasing.leases import EndedLease, Lease, LeaseTable
from nadird.master.leasing.login_sessions import SessionBook
from nadird.master.leasing.nodes import Node, NodeRegistry
from nadird.master.leasing.robots_notes import RobotsNotes
from nadird.master.leasing.welcome import Welcomer
from nadird.master.observe import trace
from nadird.master.observe.metrics import COUNTERS, MasterMetrics
from nadird.master.results.bag_done import BagEnd
from nadird.master.results.blocking import BlockStreaks
from nadird.master.results.by_job import JobTallies
from nadird.master.results.claims import Claims
from nadird.master.results.failing import FailureRouter
from nadird.master.results.fallback import Fallbacks
from nadird.master.results.feed_links import NewArticles
from nadird.master.results.near_dups import NearDuplicates
from nadird.master.results.observing import PageObserver
from nadird.master.results.records import record_from_result
from nadird.master.results.retries import is_transient
from nadird.master.revisits.clock import revisit_wall
from nadird.master.revisits.scheduler import Revisits
from nadird.master.row import Row
from nadird.master.state.frontier_db import FrontierDB
from nadird.master.state.lease_db import LeaseRecords
from nadird.protocol.messages import (
    BagDone,
    Bye,
    Credit,
    Heartbeat,
    Hello,
    Message,
    PageResult,
    Pong,
    Reset,
    Results,
)
from nadird.store.base import PageRecord

log = get_logger()

# How far behind the clock workers may be judged (in lease periods) while
# the control socket still holds unread messages: a master that far behind
# judges by the clock again (see expire).
CATCH_UP_PERIODS = 4.0


class MasterCore:
    def __init__(self, config: Config, db: FrontierDB, seen: SeenSet) -> None:
        self.config = config
        master = config.master
        self.frontier = Frontier(db, Caps(master.max_queued_per_domain, master.max_queued))
        self.leases = LeaseTable()
        self.nodes = NodeRegistry()
        self.seen = seen
        self.admission = Admission(seen, self.frontier, dict(config.jobs))
        self.admission.keep_via = config.warc is not None  # only the archive reads it
        # Shares the jobs mapping with admission (reloads and deletions too);
        # its wall clock is the system's unless a test shifts it (revisit_clock.py).
        self.revisits = Revisits(
            db.revisits, self.frontier, self.admission.jobs, wall=revisit_wall()
        )
        self.fallbacks = Fallbacks(self.frontier, self.admission)
        self.near_dups = NearDuplicates(db.near_dups, lambda name: self.admission.jobs.get(name))
        self.revisits.pace.configure(config)
        self.stats: Counter[str] = Counter()
        self.claims = Claims(self.stats)  # what of a worker's word the master checks
        self.domain_results: Counter[str] = Counter()  # pages answered, by domain
        self.refused: Counter[str] = Counter()  # results dropped, by acceptance.REASONS key
        self.invalid: Counter[tuple[str, str]] = Counter()  # invalid items by (job, field)
        self.blocks = BlockStreaks()  # 403/429/503 in a row, by domain (alerts)
        self.tallies = JobTallies()  # what job-scoped alert rules count
        self.store_trace = trace.StoreTrace()
        self.paused: set[str] = set()
        self._drop_log = PerKeyLimit()
        self.metrics = MasterMetrics()
        self.metrics.registry.register(self.revisits.lateness)
        self.observer = PageObserver(self.stats, self.tallies, self.metrics, self.revisits, db)
        # The observer's counters, under the names the views read.
        self.errors, self.statuses = self.observer.errors, self.observer.statuses
        self.domain_errors, self.page_log = self.observer.domain_errors, self.observer.page_log
        self.discovery = self.observer.discovery
        # Whether a worker's connection (by its socket identity) is still
        # open; the server asks its socket. Without one: assume it is.
        self.connected: Callable[[bytes], bool] = lambda _identity: True
        # Bags leased by a previous master run may still be in flight until
        # their leases would have expired; nobody gets their domains before,
        # unless their holder claims them (adoption.py).
        now = time.monotonic()
        self.hold_until = recovery_hold(db, master, bool(self.frontier.queued), now)
        self.adoption = Adoption(LeaseRecords(db), self.frontier, self.leases, self.stats)
        window = self.config.master.claim_window
        self.held_all = self.adoption.start(master.adopt_leases, self.hold_until, now, window)
        self.lease_mark = LeaseMark(db, master.lease_ttl, headroom_of(master))
        self._build_parts()

    def _build_parts(self) -> None:
        """The parts that decide one thing each, handed what they need."""
        config, frontier, leases, stats = self.config, self.frontier, self.leases, self.stats
        self.closer = LeaseCloser(leases, frontier, stats, self.metrics, self.adoption.held_until)
        self.dispatcher = Dispatcher(
            config, frontier, leases, self.nodes, self.admission, self.revisits, self.paused,
            stats, self.lease_mark, SessionBook(), self.hold_until, self.held_all,
        )  # fmt: skip
        self.failures = FailureRouter(
            config, frontier, self.admission, self.revisits, self.fallbacks,
            self.blocks, self.tallies, stats, self.invalid,
        )  # fmt: skip
        self.welcomer = Welcomer(
            config, self.nodes, leases, self.closer, self.adoption, self.lease_mark, frontier, stats
        )
        self.bag_end = BagEnd(
            leases, self.dispatcher, self.admission, self.revisits, self.claims, self.failures,
            self.closer, stats,
        )  # fmt: skip
        self.job_control = JobControl(
            self.admission, frontier, self.revisits, self.dispatcher.sessions, self.paused
        )

    # The server swaps in its state directory's own: the parts must hold the same.
    @property
    def robots(self) -> RobotsNotes | None:
        return self.dispatcher.robots

    @robots.setter
    def robots(self, notes: RobotsNotes | None) -> None:
        self.dispatcher.robots = notes

    @property
    def sessions(self) -> SessionBook:
        return self.dispatcher.sessions

    @sessions.setter
    def sessions(self, book: SessionBook) -> None:
        self.dispatcher.sessions = self.job_control.sessions = book

    def apply_config(self, new: Config) -> None:
        self.config = new
        self.dispatcher.config = self.failures.config = self.welcomer.config = new
        self.admission.jobs = self.revisits.jobs = dict(new.jobs)
        self.revisits.pace.configure(new)
        self.revisits.policies_changed()
        master = new.master
        self.frontier.caps = Caps(master.max_queued_per_domain, master.max_queued)
        self.sessions.resume()  # a reload may have fixed the credentials

    def status(self) -> dict[str, Any]:
        return {
            "queued": self.frontier.queued,
            "leases": len(self.leases),
            "workers": len(self.nodes),
            "seen": self.seen.added,
            "overflow": self.frontier.overflowed,
            **{k: self.stats[k] for k in sorted(COUNTERS.keys() | self.stats.keys())},  # 0s too
            **(self.revisits.status() if self.revisits.scanning else {}),
            **({"logins": self.sessions.status(time.monotonic())} if self.sessions.domains else {}),
            **({"feeds": feeds} if (feeds := self.discovery.status()) else {}),
        }

    def has_work(self) -> bool:
        """Anything queued or leased; always, while a job revisits."""
        return self.frontier.queued > 0 or len(self.leases) > 0 or self.revisits.active

    # ------------------------------------------- the parts' public names
    def dispatch(self, now: float) -> Outgoing:
        return self.dispatcher.dispatch(now)

    def next_dispatch_at(self) -> float | None:
        return self.dispatcher.next_dispatch_at()

    def record_clean_stop(self, now: float) -> None:
        self.welcomer.record_clean_stop(now)

    # ----------------------------------------------------------- control
    def drop(self, reason: str, peer: str) -> None:
        """Count a dropped message; warn at most once a second per peer."""
        self.stats["dropped_messages"] += 1
        suppressed = self._drop_log.allow(peer, time.monotonic())
        if suppressed is not None:
            log.warning("message_dropped", peer=peer, reason=reason[:200], suppressed=suppressed)

    def on_control(self, identity: bytes, msg: Message, now: float, user: str = "") -> Outgoing:
        if isinstance(msg, Hello):
            return self.welcomer.hello(identity, msg, now, user, self.connected)
        node = self.nodes.by_identity(identity, now)
        if node is None or getattr(msg, "node", None) != node.node:
            # Counted as dropped: it has no effect. A worker that merely
            # outlived a master restart says hello again on the Reset.
            self.drop(f"{msg.KIND} from an unregistered peer", identity.hex()[:16])
            return [(identity, Reset(reason="unknown worker; say hello"))]
        if isinstance(msg, Credit):
            node.credits = max(0, min(node.capacity, node.credits + msg.bags))
        elif isinstance(msg, Heartbeat):
            node.inflight = msg.inflight
            node.cpu_percent, node.rss_mb = msg.cpu_percent, msg.rss_mb
            node.proxies = msg.proxies
            self.leases.renew(node.node, msg.leases, now, self.config.master.lease_ttl)
            if msg.leases:
                self.lease_mark.cover(now)
            return [(identity, Pong(seq=msg.seq, settled=self._settled(msg.finished)))]
        elif isinstance(msg, BagDone):
            self.bag_end.on_bag_done(node, msg, now)
        elif isinstance(msg, Bye):
            self.forget_node(node, "bye", now)
        else:
            self.drop(f"unexpected {msg.KIND}", node.node)
        return []

    def _settled(self, finished: list[str]) -> list[str]:
        """The finished bags whose results are stored, once the ends of their
        leases are committed too: a crash before that would bring their
        records back with nobody to claim them, and their URLs would be
        fetched again."""
        settled = self.leases.settled(finished)
        return settled if settled and self.frontier.db.commit() else []

    def forget_node(self, node: Node, why: str, now: float) -> None:
        self.nodes.remove(node, now)
        self.closer.reclaim(self.leases.of_node(node.node), now, why)
        log.info("worker_left", worker=node.node, why=why)

    def listening(self, now: float) -> None:
        """The control socket is read from `now` on: the workers get their
        whole claim window from here, however long the start took (a loaded
        machine, a stalled process) since the waiting leases were read."""
        self.adoption.extend(now + self.config.master.claim_window)

    def expire(self, now: float, heard: float | None = None) -> None:
        """Leases expired, waiting leases unclaimed, workers silent: judged
        as of `heard`, when every control message sent before had been read
        (service/heard.py; default `now`), and never more than
        CATCH_UP_PERIODS lease periods behind, so a socket that is never
        empty cannot keep a dead worker's leases forever."""
        master = self.config.master
        as_of = now if heard is None else min(now, heard)
        as_of = max(as_of, now - CATCH_UP_PERIODS * master.lease_ttl)
        expired = self.leases.expired(as_of)
        for lease in expired:
            # A stalled holder stops itself a tenth of the lease period
            # before this (its fence, worker/core.py), perhaps just after a
            # request: the domain rests a delay before the next holder starts.
            lease.wait = max(lease.wait, self.dispatcher.delay_of(lease.job))
        self.stats["leases_expired"] += len(expired)
        self.closer.reclaim(expired, now, "lease expired")
        self.leases.ended.trim(now, self.config.master.late_window)
        self.adoption.give_up(as_of)
        for node in self.nodes.silent(as_of, master.node_timeout or master.lease_ttl):
            # Marked offline, but its leases are left to expire: a worker
            # silent for a node_timeout shorter than the lease period may be
            # stalled, not gone, and crawls on until its fence.
            self.nodes.remove(node, now)
            log.info("worker_left", worker=node.node, why="silent")

    # ----------------------------------------------------------- results
    def _accept(
        self, msg: Results, now: float, user: str
    ) -> tuple[Lease | None, Lease | EndedLease] | None:
        """(the live lease or None for late results, the lease they belong to),
        or None when they are refused: forged, or from a lease long gone.
        Nothing of a refused message is stored; its URLs stay queued and are
        crawled by whoever holds them."""
        held = self.adoption.lease_named(msg, now, self.config.master.late_window)
        lease = held if isinstance(held, Lease) else None
        refused = refusal(msg, user, held)
        if refused is not None or held is None:
            self.refused[refused or "no_lease"] += 1
            self.drop(REASONS[refused or "no_lease"], msg.node)
            return None
        if lease is None:
            self.stats["late_results"] += len(msg.pages)
        else:
            self._answered(held.job, lease.domain, len(msg.pages))
        return lease, held

    def on_results(self, msg: Results, now: float, user: str = "") -> list[PageRecord]:
        """Admit links, settle URLs, schedule retries; returns records to store."""
        accepted = self._accept(msg, now, user)
        if accepted is None:
            return []
        lease, held = accepted
        records: list[PageRecord] = []
        links: list[LinkBatch] = []
        sources: list[Source] = []  # per batch of links: the page's final URL, the worker
        late: dict[str, list[tuple[bytes, int]]] = {}
        debug = gate.debug  # once per message: no per-URL cost while debug is off
        unchanged: list[bytes] = []  # 304s: settled without a store write
        linked: list[bytes] = []  # per batch of links: the page's fp
        for page in msg.pages:
            row = lease.pending.pop(page.fp, None) if lease is not None else None
            if row is None and lease is not None and page.fp in lease.urls:
                continue  # answered in this lease already (sent again after a restart)
            self.observer.observe(page, held.job)
            if is_transient(page):
                self.failures.failed(page, row, lease)
                continue
            if page.links:
                links.append(links_of(page))
                sources.append((page.final_url or page.url, msg.node))
                linked.append(page.fp)
            self.claims.check(self.admission.jobs.get(held.job), page, time.time())
            if row is not None:
                if self.failures.invalid_handed_over(page, row, held.job):
                    continue
                self.frontier.acked(page.fp)
            else:
                self.failures.count_invalid(page, held.job)
                late.setdefault(domain_of(page.url), []).append((page.fp, page.row))
            self._record(page, row, held, records, unchanged)
            self.stats["pages_error" if page.error else "pages_ok"] += 1
        if lease is not None:
            self.blocks.pages(lease.domain, msg.pages, held.job)
        for domain, pages in late.items():
            self._answered(held.job, domain, len(pages))
            self.frontier.late(domain, pages)
        if unchanged:
            self._settle(unchanged)
        if links:
            # One frontier transaction for the whole message, committed before
            # the records are handed to the store writer: no page can be
            # acknowledged (its URL forgotten) before the links it found.
            articles = self._admit(held.job, links, sources)
            self.revisits.found(held.job, [fp for batch in links for fp in batch[1]])
            if articles is not None:  # a feeds job: hubs learned, articles noted
                self.observer.feed_links.found(held.job, msg.pages, linked, articles)
        if lease is not None:
            self.closer.close_if_finished(lease, now)
        if debug:
            self.store_trace.results(records, msg.lease, lease.domain if lease else None)
        return self.near_dups.check(records)

    def _admit(self, job: str, links: list[LinkBatch], sources: list[Source]) -> NewArticles | None:
        """Admit the links; for a feeds job, the new articles each batch named."""
        spec = self.admission.jobs.get(job)
        articles: NewArticles | None = [] if spec is not None and spec.feeds else None
        self.admission.admit_many(job, links, sources, articles)
        return articles

    def _answered(self, job: str, domain: str, pages: int) -> None:
        self.domain_results[domain] += pages
        self.tallies.answered(job, domain, pages)

    def _record(
        self,
        page: PageResult,
        row: Row | None,
        held: Lease | EndedLease,
        records: list[PageRecord],
        unchanged: list[bytes],
    ) -> None:
        """The page's record for the store; a 304 of a known URL has none (the
        stored page stays as it is) and is settled at once. The queue row's
        request is kept for revisits, which ask again alike."""
        request = None if row is None else row.request
        if not self.revisits.on_page(page, held.job, request):
            unchanged.append(page.fp)
            return
        record = record_from_result(page, held.job, held.holder.node)
        # Whether the URL came by a fallback is the queue's to say, not the worker's.
        record.fallback_from = None if row is None else row.fallback_from
        records.append(record)

    def on_durable(self, records: Sequence[PageRecord]) -> None:
        self.tallies.durable(records)
        fps = [r.fp for r in records]
        self._settle(fps)
        self.leases.stored(fps)
        self.store_trace.durable(records, gate.debug)

    def _settle(self, fps: list[bytes]) -> None:
        """The URLs' queue rows leave; their revisit rows are written in the
        same transaction."""
        self.frontier.durable(fps)
        self.revisits.settle(fps)

    def revisit_scan(self) -> int:
        """Queue the revisits that are due (between ticks: see server.py)."""
        return self.revisits.scan() if self.revisits.scanning else 0

    def revisit_scan_in(self, idle: float) -> float:
        """Seconds until the next revisit scan is worth running (at most `idle`)."""
        return self.revisits.next_scan_in(idle) if self.revisits.scanning else idle

    def revisit_tick(self) -> int:
        """Queue the revisits that are due (a bounded number per tick) and
        re-plan the domains whose adaptive pages moved, when it is time."""
        if not (self.revisits.scanning or self.revisits.rescheduling):
            return 0
        return self.revisits.tick(self.config.master.revisit_allocate_interval)
