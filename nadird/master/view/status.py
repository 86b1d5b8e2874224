"""What the master reports about itself: API stats, one domain, metrics state."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nadird.common.errors import StoreError
from nadird.common.http_status import status_classes
from nadird.common.logs import get_logger
from nadird.common.urls import registrable_domain
from nadird.master.observe.history import Sample
from nadird.store.backend import Store

if TYPE_CHECKING:
    from nadird.master.view.view import MasterView

log = get_logger()
COUNT_TRIES = 5  # counts of the store at start, while pages land meanwhile


class StoredTotal:
    """Pages in the store, across restarts: the store's count, taken once at
    start in the background (a MongoDB outage must not hold the master up),
    plus the pages this run added (`Store.pages_added`: a page written again
    is still one page). None until the count is known."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._counted: tuple[int, int] | None = None  # (count, pages_added then)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._count(), name="store-count")

    async def _count(self) -> None:
        try:
            for _ in range(COUNT_TRIES):
                # A page added while the count ran may be in it or not: count
                # again (the last try is kept, off by at most that batch).
                added = self._store.pages_added
                self._counted = (await self._store.count(), added)
                if self._store.pages_added == added:
                    break
        except StoreError as exc:
            log.warning("store_count_failed", error=str(exc))

    def total(self) -> int | None:
        if self._counted is None:
            return None
        count, added = self._counted
        return count + self._store.pages_added - added

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


def invalid_by_job(counts: Mapping[tuple[str, str], int]) -> dict[str, dict[str, int]]:
    """Invalid items per job and field: {job: {field: count}} (also URLs
    handed on, per job and fallback job)."""
    by_job: dict[str, dict[str, int]] = {}
    for (job, name), count in sorted(counts.items()):
        by_job.setdefault(job, {})[name] = count
    return by_job


def failures(master: MasterView) -> dict[str, int]:
    """Failed fetches by kind and 4xx/5xx answers (as the console's Errors page counts)."""
    counts = master.counts()
    answers = status_classes(counts.statuses)
    return {**counts.errors, **{f"HTTP {k}": answers[k] for k in ("4xx", "5xx") if k in answers}}


def sample(master: MasterView, at: float) -> Sample:
    """The numbers the console charts, now (wall clock `at`)."""
    now = master.status()
    return Sample(
        at,
        master.store_progress().written,
        Sample.errors_of(failures(master)),
        int(now["queued"]),
        int(now["leases"]),
        int(now.get("revisit_due", 0)),
        int(now.get("revisit_overdue", 0)),
    )


def full(master: MasterView) -> dict[str, Any]:
    counts, store = master.counts(), master.store_progress()
    jobs = master.jobs()
    return {
        **master.status(),
        "pages_per_s": master.pages_per_second(),
        "errors_by_kind": dict(counts.errors),
        "refused_results": dict(counts.refused),
        "rejected_links": dict(counts.rejected_links),
        "http_status": status_classes(counts.statuses),
        "paused_jobs": sorted(name for name, job in jobs.items() if job.paused),
        "invalid_items": invalid_by_job(counts.invalid),
        "fallbacks": invalid_by_job(counts.fallbacks),
        "fallback_extractions": invalid_by_job(counts.fallback_extractions),
        "article_given_up": invalid_by_job(counts.article_given_up),
        "near_duplicates": invalid_by_job(counts.near_duplicates),
        "jobs": {
            name: {"admitted": job.admitted, "paused": job.paused} for name, job in jobs.items()
        },
        "store": {
            "pending": store.pending,
            "written": store.written,
            "failures": store.failures,
            "spool_records": store.spool_records,
            "backpressure": store.backpressure,
        },
        # Whether the state directory (and the store) take writes: see master/observe/health.py.
        "state": master.health.status(),
    }


def domain(master: MasterView, name: str) -> dict[str, Any] | None:
    """One domain's state; None only for a domain this master never queued.

    A host of a domain (www.example.com) answers for its domain: the
    frontier keeps one queue per registrable domain.
    """
    report = master.domain(name)
    if report is None:
        parent = registrable_domain(name)
        return domain(master, parent) if parent != name else None
    ds = report.queue
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
        "results_since_start": report.results,
        "errors": report.errors,
        "dead_letters": report.dead_letters,
        "robots": "checked by workers; the files they fetch are passed on with bags",
    }


def nodes(master: MasterView) -> list[dict[str, Any]]:
    """Every worker the API lists: connected ones, then those gone."""
    now = time.monotonic()
    rows = []
    for entry in master.nodes():
        node = entry.node
        status = "offline" if not entry.online else ("busy" if entry.bags else "idle")
        rows.append(
            {
                "node": node.node,
                "group": node.group,
                "capabilities": node.capabilities,
                "host": node.host,
                "pid": node.pid,
                "status": status,
                "bags": entry.bags,
                "last_heartbeat_s": round(now - node.last_seen, 3),
                "cpu_percent": node.cpu_percent,
                "rss_mb": node.rss_mb,
                "proxies": node.proxies,
            }
        )
    return rows


def for_metrics(master: MasterView) -> dict[str, Any]:
    workers = {"idle": 0, "busy": 0, "offline": 0}
    for entry in master.nodes():
        workers["offline" if not entry.online else "busy" if entry.bags else "idle"] += 1
    counts = master.counts()
    return {
        **master.status(),
        "stats": dict(counts.stats),
        "errors": dict(counts.errors),
        "refused": dict(counts.refused),
        "rejected_links": dict(counts.rejected_links),
        "statuses": dict(counts.statuses),
        "invalid": dict(counts.invalid),
        "fallback_extractions": dict(counts.fallback_extractions),
        "article_given_up": dict(counts.article_given_up),
        "near_duplicates": dict(counts.near_duplicates),
        "workers_by_status": workers,
        "domains": master.domain_sizes(),
        "spool_records": master.store_progress().spool_records,
        "state_healthy": int(master.health.healthy),
        "state_write_failures": master.health.failures,
        "loops_healthy": int(master.loop_failure() is None),
    }
