"""A worker's BagDone: the end of a bag, as the master takes it.

The worker says how long its domain should rest, what it learnt of robots
and of the job's login, and which URLs it hands back (throttled ones go
back with a delay); the lease closes when nothing of it is still due. Kept
out of core.py because it is one message's handling with its own checks
(claims.py bounds what the worker says).
"""

from __future__ import annotations

from collections import Counter

from nadird.common.logs import gate
from nadird.master.frontier.admission import Admission
from nadird.master.leasing.closing import LeaseCloser
from nadird.master.leasing.dispatch import Dispatcher
from nadird.master.leasing.leases import LeaseTable
from nadird.master.leasing.nodes import Node
from nadird.master.observe import trace
from nadird.master.results.claims import Claims
from nadird.master.results.failing import FailureRouter
from nadird.master.revisits.scheduler import Revisits
from nadird.protocol.messages import BagDone


class BagEnd:
    """Takes BagDone messages. The config (reloads), robots notes and login
    sessions are read from the dispatcher: the core swaps those in there."""

    def __init__(
        self, leases: LeaseTable, dispatcher: Dispatcher, admission: Admission,
        revisits: Revisits, claims: Claims, failures: FailureRouter, closer: LeaseCloser,
        stats: Counter[str],
    ) -> None:  # fmt: skip
        self.leases, self.dispatcher, self.admission = leases, dispatcher, admission
        self.revisits, self.claims, self.failures = revisits, claims, failures
        self.closer, self.stats = closer, stats

    def on_bag_done(self, node: Node, msg: BagDone, now: float) -> None:
        lease = self.leases.current(msg.lease, msg.epoch)
        if lease is None or lease.node != node.node:
            self.stats["stale_bag_done"] += 1
            return
        lease.done = True
        lease.wait = self.claims.rest(msg.wait, node.node, self.dispatcher.config.fetch.throttle)
        robots = self.dispatcher.robots
        if msg.robots and robots is not None:
            kept = robots.remember(self.claims.robots(msg.robots, lease.domain))
            self.revisits.crawl_delays(kept.items())
        job = self.admission.jobs.get(lease.job)
        if job is not None and job.login is not None:
            sessions = self.dispatcher.sessions
            rest = sessions.reported(lease.job, lease.domain, msg, job.login, now)
            lease.wait = max(lease.wait, rest)
            self.stats["login_failures"] += msg.login_failures
        throttled = set(msg.throttled)
        for fp in msg.returned:
            row = lease.pending.pop(fp, None)
            if row is None:
                continue
            if fp in throttled:
                self.failures.throttled(row, lease.wait, lease)
            else:
                lease.returned.append(row)
        if gate.debug:
            trace.returned(lease, lease.returned, "handed back by the worker")
        self.closer.close_if_finished(lease, now)
