"""Dispatch: which worker gets a bag of which ready domain, and what the bag holds.

The one place that turns queued rows into leases; MasterCore (core.py) owns
a Dispatcher and hands it the parts of the master it reads.
"""

from __future__ import annotations

from collections import Counter

from nadird.common.logs import gate
from nadird.common.urls import origin_of
from nadird.config import Config
from nadird.job.request import unpack_wire
from nadird.master.frontier.admission import Admission
from nadird.master.frontier.queues import Frontier
from nadird.master.leasing.lease_mark import LeaseMark
from nadird.master.leasing.leases import Lease, LeaseTable
from nadird.master.leasing.login_sessions import SessionBook
from nadird.master.leasing.nodes import Node, NodeRegistry
from nadird.master.leasing.robots_notes import RobotsNotes
from nadird.master.observe import trace
from nadird.master.revisits.scheduler import Revisits
from nadird.protocol.messages import Bag, Message

# Seconds before a domain whose job no connected worker can run is tried again.
NO_WORKER_RETRY = 2.0
# Seconds between two looks at a domain whose job's login is paused.
LOGIN_PAUSED_RETRY = 2.0
Outgoing = list[tuple[bytes, Message]]


class Dispatcher:
    def __init__(
        self,
        config: Config,
        frontier: Frontier,
        leases: LeaseTable,
        nodes: NodeRegistry,
        admission: Admission,
        revisits: Revisits,
        paused: set[str],
        stats: Counter[str],
        lease_mark: LeaseMark,
        sessions: SessionBook,
        hold_until: float,
        held_all: bool,
    ) -> None:
        self.config = config  # replaced on a reload (MasterCore.apply_config)
        self.frontier = frontier
        self.leases = leases
        self.nodes = nodes
        self.admission = admission
        self.revisits = revisits
        self.paused = paused  # the jobs paused, shared with JobControl
        self.stats = stats
        self.lease_mark = lease_mark
        # Until when the previous run's leases hold their domains, and
        # whether every domain waits: False once those leases are known one
        # by one (adoption.py), when only their domains wait.
        self.hold_until = hold_until
        self.held_all = held_all
        # Both replaced by the server's own (MasterCore.robots, .sessions).
        self.sessions = sessions  # login sessions (the server's is saved)
        self.robots: RobotsNotes | None = None  # None: robots.txt not shared

    def dispatch(self, now: float) -> Outgoing:
        """Lease ready domains to workers with credit; one bag per credit.

        A bag goes only to a worker of the job's group with every capability
        the job requires; a domain no worker can take waits a little.
        """
        if self.held_all and now < self.hold_until:
            return []
        out: Outgoing = []
        nodes = self.nodes.with_credits()
        master = self.config.master
        while nodes:
            ds = self.frontier.pop_ready(now)
            if ds is None:
                break
            rows = self.frontier.take(ds, master.bag_size, self.paused)
            if not rows:
                continue
            if self.sessions.paused(rows[0].job, ds.name, now):
                self.frontier.release(ds.name, now + LOGIN_PAUSED_RETRY, rows)
                continue
            node = self._pick(nodes, rows[0].job)
            if node is None:
                self.frontier.release(ds.name, now + NO_WORKER_RETRY, rows)
                self.stats["no_capable_worker"] += 1
                continue
            lease = self.leases.grant(ds.name, node.holder(), rows, now, master.lease_ttl)
            if gate.debug:
                trace.leased(lease)
            node.credits -= 1
            if node.credits == 0:
                nodes.remove(node)
            out.append((node.identity, self._bag(lease, now)))
            self.stats["bags_leased"] += 1
        if out:
            self.lease_mark.cover(now)
            if self.leases.records is not None:
                # The leases' rows (adoption.py) reach the file before any
                # Bag leaves: a restarted master must know every lease out.
                self.frontier.db.commit()
        return out

    def _pick(self, nodes: list[Node], job_name: str) -> Node | None:
        job = self.admission.jobs.get(job_name)
        group, requires = (job.group, job.requires) if job is not None else (None, [])
        able = [n for n in nodes if n.can_run(group, requires)]
        return max(able, key=lambda n: n.credits) if able else None

    def next_dispatch_at(self) -> float | None:
        if not self.nodes.with_credits():
            return None
        ready = self.frontier.next_ready_at()
        if ready is None:
            return None
        return max(ready, self.hold_until) if self.held_all else ready

    def delay_of(self, job_name: str) -> float:
        """The politeness delay of a job's bags (the default for a job gone)."""
        job = self.admission.jobs.get(job_name)
        if job is not None and job.delay is not None:
            return job.delay
        return self.config.politeness.delay

    def _bag(self, lease: Lease, now: float) -> Bag:
        job = self.admission.jobs[lease.job]
        politeness = self.config.politeness
        rows = list(lease.pending.values())
        return Bag(
            lease=lease.id,
            epoch=lease.epoch,
            domain=lease.domain,
            job=job.to_wire(),
            urls=[r.url for r in rows],
            fps=[r.fp for r in rows],
            depths=[r.depth for r in rows],
            rows=[r.id for r in rows],
            attempts=[r.attempts + 1 for r in rows],
            validators=self.revisits.validators(lease.job, [r.fp for r in rows]),
            # Only a bag holding a request other than a plain GET carries any.
            requests=[unpack_wire(r.request) for r in rows]
            if any(r.request is not None for r in rows)
            else [],
            delay=self.delay_of(lease.job),
            domain_concurrency=job.domain_concurrency or politeness.domain_concurrency,
            ttl=self.config.master.lease_ttl,
            robots=self.robots.for_origins({origin_of(r.url) for r in rows})
            if self.robots is not None
            else [],
            sessions=self.sessions.for_bag(lease.job, lease.domain, now),
            archive=self.config.warc.max_body_bytes if self.config.warc else 0,
        )
