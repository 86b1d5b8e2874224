"""Ending a lease: closed when its bag is done and nothing of it is due, or
reclaimed when its holder is gone (expired, silent, restarted, said bye);
either way its domain is released with the URLs that are to be crawled again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from nadird.common.logs import gate, get_logger
from nadird.master.frontier.queues import Frontier
from nadird.master.leasing.leases import Lease, LeaseTable
from nadird.master.observe import trace
from nadird.master.observe.metrics import MasterMetrics

log = get_logger()


class LeaseCloser:
    def __init__(
        self,
        leases: LeaseTable,
        frontier: Frontier,
        stats: Counter[str],
        metrics: MasterMetrics,
        held_until: Callable[[str], float] = lambda domain: 0.0,
    ) -> None:
        self.leases = leases
        self.frontier = frontier
        self.stats = stats
        self.metrics = metrics
        self.held_until = held_until  # a domain's hold after a restart (adoption.py)

    def close_if_finished(self, lease: Lease, now: float) -> None:
        if not (lease.done and not lease.pending):
            return
        self.leases.remove(lease, now, self.frontier.unstored(lease.urls))
        self.frontier.release(lease.domain, self._next(lease, now), lease.returned)
        self.stats["bags_done"] += 1
        self.metrics.lease_seconds.observe(now - lease.granted_at)

    def reclaim(self, leases: Sequence[Lease], now: float, why: str) -> None:
        for lease in leases:
            self.leases.remove(lease, now, self.frontier.unstored(lease.urls))
            back = lease.returned + list(lease.pending.values())
            self.frontier.release(lease.domain, self._next(lease, now), back)
            if gate.debug:
                trace.returned(lease, back, why)
            self.stats["leases_reclaimed"] += 1
            log.info(
                "lease_reclaimed",
                lease=lease.id,
                domain=lease.domain,
                worker=lease.node,
                urls=len(back),
                why=why,
            )

    def _next(self, lease: Lease, now: float) -> float:
        """When the lease's domain may be leased again (monotonic)."""
        return max(now + lease.wait, self.held_until(lease.domain))
