"""What the master reports about itself: API stats, one domain, metrics state."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from nadird.errors import StoreError
from nadird.logs import get_logger
from nadird.master.frontier import DomainState
from nadird.master.metrics import status_classes
from nadird.store.base import Store
from nadird.urls import registrable_domain

if TYPE_CHECKING:
    from nadird.master.server import Master

log = get_logger()


class StoredTotal:
    """Records in the store, across restarts: the store's count, taken once
    at start in the background (a MongoDB outage must not hold the master
    up), plus what this run wrote. A record written again (a late duplicate)
    counts twice until the next start; None until the count is known."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._before: int | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._count(), name="store-count")

    async def _count(self) -> None:
        try:
            self._before = await self._store.count()
        except StoreError as exc:
            log.warning("store_count_failed", error=str(exc))

    def total(self, written: int) -> int | None:
        return None if self._before is None else self._before + written

    async def stop(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


def pages_per_second(samples: deque[tuple[float, int]]) -> float:
    """Stored records per second over the sampled window (time, records written)."""
    if len(samples) < 2:
        return 0.0
    (t0, n0), (t1, n1) = samples[0], samples[-1]
    return round((n1 - n0) / (t1 - t0), 1) if t1 > t0 else 0.0


def full(master: Master) -> dict[str, Any]:
    core = master.core
    writer = master.writer
    return {
        **master.status(),
        "pages_per_s": master.pages_per_second(),
        "errors_by_kind": dict(core.errors),
        "refused_results": dict(core.refused),
        "http_status": status_classes(core.statuses),
        "paused_jobs": sorted(core.paused),
        "jobs": {
            name: {"admitted": core.admission.admitted[name], "paused": name in core.paused}
            for name in core.admission.jobs
        },
        "store": {
            "pending": writer.pending,
            "written": writer.written,
            "failures": writer.failures,
            "spool_records": getattr(writer.store, "spool_records", 0),
            "backpressure": bool(getattr(writer.store, "backpressure", False)),
        },
        # Whether the state directory (and the store) take writes: see health.py.
        "state": master.health.status(),
    }


def domain(master: Master, name: str) -> dict[str, Any] | None:
    """One domain's state; None only for a domain this master never queued.

    A host of a domain (www.example.com) answers for its domain: the
    frontier keeps one queue per registrable domain.
    """
    frontier = master.core.frontier
    if frontier.get(name) is None and not frontier.db.has_domain(name):
        parent = registrable_domain(name)
        return domain(master, parent) if parent != name else None
    # A domain whose URLs are all done may have no record in memory (after
    # a restart): it is known, with nothing queued.
    ds = frontier.get(name) or DomainState(name, 0)
    politeness = master.config.politeness
    return {
        "domain": name,
        "done": ds.rows == 0,
        "queued": ds.rows,
        "available": ds.available,
        "leased": ds.leased,
        "in_lease": ds.out,
        "being_stored": ds.settling,
        "next_allowed_in_s": round(max(0.0, ds.next_allowed - time.monotonic()), 3),
        "delay": politeness.delay,
        "domain_concurrency": politeness.domain_concurrency,
        "results_since_start": master.core.domain_results[name],
        "errors": master.core.domain_errors[name],
        "dead_letters": len(frontier.db.dead_letters(domain=name)),
        "robots": "checked by workers (cached per worker)",
    }


def for_metrics(master: Master) -> dict[str, Any]:
    core = master.core
    workers = {"idle": 0, "busy": 0, "offline": len(core.nodes.offline())}
    for node in core.nodes.all():
        workers["busy" if core.leases.of_node(node.node) else "idle"] += 1
    return {
        **master.status(),
        "stats": dict(core.stats),
        "errors": dict(core.errors),
        "refused": dict(core.refused),
        "statuses": dict(core.statuses),
        "workers_by_status": workers,
        "domains": core.frontier.domain_sizes(),
        "spool_records": getattr(master.writer.store, "spool_records", 0),
        "state_healthy": int(master.health.healthy),
        "state_write_failures": master.health.failures,
    }
