"""The master's reads behind `MasterView` (master/view/view.py): what the
API, the console, the status report and the alerts see, taken from the core,
the writer and the alerts. `Master` (server.py) builds on it."""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any, cast

from prometheus_client import Metric

from nadird.master.frontier.queues import DomainQueue
from nadird.master.leasing.nodes import NodeLeases
from nadird.master.observe.counts import (
    Counts,
    DomainCounters,
    JobCounts,
    JobProgress,
    StoreProgress,
)
from nadird.master.observe.health import StateHealth
from nadird.master.results.recent import RecentError, RecentFetch
from nadird.master.state.dead_db import DeadURL
from nadird.master.state.revisit_db import Entry
from nadird.master.view import status
from nadird.master.view.view import DomainReport
from nadird.revisit.policy import RevisitPolicy
from nadird.store.base import PageRecord
from nadird.store.history import Version
from nadird.store.items import KeyedItem

if TYPE_CHECKING:
    from nadird.master.alerts.engine import Event, OpenAlert
    from nadird.master.alerts.service import Alerts
    from nadird.master.archive.copies import Capture
    from nadird.master.archive.service import Archive
    from nadird.master.core import MasterCore
    from nadird.master.results.writer import ResultWriter
    from nadird.master.revisits.changes import FieldChange
    from nadird.master.service.loops import LoopGuard
    from nadird.master.service.replica import Replicator


LATENCY = "nadird_discovery_latency_seconds"


def latency_buckets(families: Iterable[Metric]) -> dict[str, list[tuple[float, float]]]:
    """Per job, the discovery latency histogram's (upper bound, cumulative count)."""
    buckets: dict[str, list[tuple[float, float]]] = {}
    for family in families:
        if family.name != LATENCY:
            continue
        for sample in family.samples:
            if sample.name == LATENCY + "_bucket":
                bound = float(sample.labels["le"])
                buckets.setdefault(sample.labels["job"], []).append((bound, sample.value))
    return buckets


class MasterReads:
    """The part of MasterView read straight from the core, the writer and the store."""

    core: MasterCore
    writer: ResultWriter
    loops: LoopGuard
    alerts: Alerts
    replica: Replicator | None
    archive: Archive | None
    stored: status.StoredTotal
    health: StateHealth
    _rate: deque[tuple[float, int]]  # (when, pages written by then), a few recent

    def status(self) -> dict[str, Any]:
        return {
            **self.core.status(),
            "store_pending": self.writer.pending,
            # Pages in the store (across restarts; a page written again is one
            # page) and this run's writes (each counted).
            "stored_total": self.stored.total(),
            "stored_this_run": self.writer.written,
            "complete": self.is_complete(),
        }

    def pages_per_second(self) -> float:
        return status.pages_per_second(self._rate)

    def is_complete(self) -> bool:
        """Nothing queued or leased, every result stored, all of it committed."""
        return not self.core.has_work() and self.writer.pending == 0 and self.health.healthy

    def loop_failure(self) -> str | None:
        return self.loops.failure

    def replica_behind(self) -> dict[str, Any] | None:
        return None if self.replica is None else self.replica.behind()

    def replica_superseded(self) -> str | None:
        """Why this master stops: another one took its replica over (None: it did not)."""
        return None if self.replica is None else self.replica.superseded

    def replica_lag(self) -> float | None:
        return None if self.replica is None else self.replica.reading().lag_seconds

    def counts(self) -> Counts:
        core = self.core
        return Counts(
            core.stats,
            core.errors,
            core.refused,
            core.statuses,
            core.invalid,
            core.fallbacks.handed,
            core.admission.check.rejected,
            core.tallies.articles.fallbacks,
            core.tallies.articles.given_up,
            core.near_dups.counted,
        )

    def store_progress(self) -> StoreProgress:
        writer = self.writer
        store = writer.store
        return StoreProgress(
            writer.pending, writer.written, writer.failures, store.spool_records, store.backpressure
        )

    def jobs(self) -> dict[str, JobProgress]:
        core = self.core
        return {
            name: JobProgress(core.admission.admitted[name], name in core.paused)
            for name in core.admission.jobs
        }

    def nodes(self) -> list[NodeLeases]:
        core = self.core
        return [NodeLeases(n, len(core.leases.of_node(n.node))) for n in core.nodes.all()] + [
            NodeLeases(n, 0) for n in core.nodes.offline()
        ]

    def domain(self, name: str) -> DomainReport | None:
        core = self.core
        frontier = core.frontier
        queue = frontier.get(name)
        if queue is None:
            if not frontier.db.has_domain(name):
                return None
            # A domain whose URLs are all done may have no record in memory
            # (after a restart): it is known, with nothing queued.
            queue = DomainQueue(name, 0)
        letters = len(frontier.db.dead_letters(domain=name))
        return DomainReport(queue, core.domain_results[name], core.domain_errors[name], letters)

    def domain_sizes(self) -> list[tuple[str, int]]:
        return self.core.frontier.domain_sizes()

    def metrics_text(self) -> bytes:
        return self.core.metrics.exposition()

    def blocked_streaks(self) -> dict[str, int]:
        return dict(self.core.blocks.streaks)

    def domain_pages(self) -> dict[str, tuple[int, int]]:
        core = self.core
        return {d: (n, core.domain_errors[d]) for d, n in core.domain_results.items()}

    def job_counts(self, job: str) -> JobCounts:
        tallies = self.core.tallies
        return JobCounts(
            tallies.stored[job],
            tallies.dead_letters[job],
            self.core.blocks.of_job(job),
            tallies.domains(job),
        )

    def job_queued(self, job: str) -> int:
        return self.core.frontier.db.job_rows_count(job)

    def take_field_changes(self) -> list[FieldChange]:
        revisits = self.core.revisits
        if revisits.field_changes_dropped:  # more than the alerts tick took in time
            self.core.stats["alerts_dropped"] += revisits.field_changes_dropped
            revisits.field_changes_dropped = 0
        return revisits.take_field_changes()

    def watch_fields(self, watch: dict[str, tuple[str, ...]]) -> None:
        self.core.revisits.watch = dict(watch)

    def pause_job(self, job: str) -> None:
        self.core.job_control.pause(job)

    def delete_job(self, job: str) -> int:
        return self.core.job_control.delete_job(job)

    def domain_queues(self) -> Collection[DomainQueue]:
        frontier = self.core.frontier
        queues = frontier.queue_view()
        if frontier.db.domains_known() == len(queues):
            return queues  # every domain has its queue in memory (no need to read names)
        # A domain whose URLs were all done before a restart has no queue in
        # memory, but it was crawled (and /api/domains answers for it): it is
        # listed as done, with nothing queued.
        done = [
            DomainQueue(name, did)
            for did, name in frontier.db.domain_names()
            if frontier.get(name) is None
        ]
        return [*queues, *done] if done else queues

    def domain_counters(self) -> DomainCounters:
        core = self.core
        log = core.page_log
        return DomainCounters(core.domain_results, log.failures, log.last_status)

    def robots_of(self, host: str) -> list[tuple[str, bool, float]]:
        robots = self.core.robots
        return [] if robots is None else robots.for_host(host)

    def dead_letter_page(self, offset: int, limit: int) -> tuple[int, list[DeadURL]]:
        db = self.core.frontier.db
        return db.count_dead(), db.dead_letters(page=(offset, limit))

    def retry_dead_letters(self, fps: Iterable[bytes]) -> int:
        return self.core.frontier.db.mark_requeue(fps)

    def open_alerts(self) -> list[OpenAlert]:
        return self.alerts.engine.open_alerts()

    def recent_alerts(self) -> list[Event]:
        return list(self.alerts.engine.recent)

    def recent_errors(self) -> list[RecentError]:
        return list(self.core.page_log.errors)

    async def recent_changes(self, limit: int) -> list[dict[str, Any]] | None:
        recent = getattr(self.writer.store, "recent_changes", None)
        return None if recent is None else list(await recent(limit))

    def recent_fetches(self) -> list[RecentFetch]:
        return list(self.core.page_log.fetches)

    def revisit_entry(self, fp: bytes) -> Entry | None:
        return self.core.revisits.table.get(fp)

    def revisit_policy(self, job: str) -> RevisitPolicy | None:
        spec = self.core.admission.jobs.get(job)
        return None if spec is None else spec.revisit_policy()

    def domain_revisits(self, domain: str) -> tuple[int, int]:
        revisits = self.core.revisits
        return revisits.domain_checks[domain], revisits.domain_changes[domain]

    def discovery_buckets(self) -> dict[str, list[tuple[float, float]]]:
        return latency_buckets(self.core.discovery.collect())

    def captures(self, fp: bytes, limit: int) -> tuple[str, list[Capture]] | None:
        if self.archive is None:
            return None
        return str(self.archive.directory), self.archive.captures(fp, limit)

    async def stored_page(self, fp: bytes) -> PageRecord | None:
        read = getattr(self.writer.store, "stored_page", None)
        return None if read is None else cast("PageRecord | None", await read(fp))

    async def page_versions(
        self, job: str, url: str, offset: int, limit: int
    ) -> tuple[int, list[Version]] | None:
        read = getattr(self.writer.store, "page_versions", None)
        if read is None:
            return None
        return cast("tuple[int, list[Version]]", await read(job, url, offset, limit))

    async def keyed_item(self, job: str, key: str) -> KeyedItem | None:
        read = getattr(self.writer.store, "keyed_item", None)
        return None if read is None else cast("KeyedItem | None", await read(job, key))
