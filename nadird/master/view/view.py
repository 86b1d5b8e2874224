"""What the management API and the status reports may see of the master.

`MasterView` lists every read they need and the few actions the API may
take; `Master` implements it (most of it through `MasterReads`, service/reads.py). The
API and `status.py` use nothing else, so the master's internals (core,
frontier, lease table, writer) can change without touching them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from nadird.master.frontier.queues import DomainQueue
from nadird.master.leasing.nodes import NodeLeases
from nadird.master.observe.counts import (
    Counts,
    DomainCounters,
    JobCounts,
    JobProgress,
    StoreProgress,
)
from nadird.master.observe.history import StatsHistory
from nadird.master.results.recent import RecentError, RecentFetch
from nadird.master.state.dead_db import DeadURL
from nadird.master.state.revisit_db import Entry
from nadird.revisit.policy import RevisitPolicy
from nadird.store.base import PageRecord
from nadird.store.history import Version
from nadird.store.items import KeyedItem

if TYPE_CHECKING:
    from nadird.config import Config
    from nadird.job.request import RequestSpec
    from nadird.master.alerts.engine import Event, OpenAlert
    from nadird.master.archive.copies import Capture
    from nadird.master.observe.health import StateHealth
    from nadird.master.revisits.changes import FieldChange


@dataclass(frozen=True)
class DomainReport:
    queue: DomainQueue
    results: int  # pages answered since this master started
    errors: int
    dead_letters: int


class MasterView(Protocol):
    @property
    def config(self) -> Config: ...

    @property
    def health(self) -> StateHealth:
        """Whether the state directory (and the store) take writes."""

    def loop_failure(self) -> str | None:
        """Why one of the master's loops ended (None while every loop runs)."""

    def replica_behind(self) -> dict[str, Any] | None:
        """The replica's lag when over master.replica_max_lag (None: within it, or none)."""

    def replica_superseded(self) -> str | None:
        """Why this master stops: another one took its replica over (None: it did not)."""

    # Status.
    def status(self) -> dict[str, Any]:
        """The short status: queue, leases, workers, counters, store progress."""

    def pages_per_second(self) -> float: ...

    @property
    def history(self) -> StatsHistory:
        """The crawl's numbers over time (observe/history.py)."""

    @property
    def started_at(self) -> float:
        """When this master started (wall clock)."""

    def counts(self) -> Counts: ...

    def store_progress(self) -> StoreProgress: ...

    def jobs(self) -> dict[str, JobProgress]:
        """Every job the master runs, by name."""

    def nodes(self) -> list[NodeLeases]:
        """Connected workers, then those gone (the most recent ones kept)."""

    def domain(self, name: str) -> DomainReport | None:
        """One frontier queue; None for a name this master never queued."""

    def domain_sizes(self) -> list[tuple[str, int]]:
        """(domain, queued URLs) for every domain with any queued."""

    def metrics_text(self) -> bytes:
        """The Prometheus exposition."""

    def blocked_streaks(self) -> dict[str, int]:
        """Domains whose last answers were 403/429/503: how many in a row."""

    def domain_pages(self) -> dict[str, tuple[int, int]]:
        """(pages answered, errors) by domain since start."""

    def job_counts(self, job: str) -> JobCounts: ...

    def job_queued(self, job: str) -> int:
        """A job's queued URLs (a scan of the queue: asked seldom)."""

    def take_field_changes(self) -> list[FieldChange]:
        """The watched fields that changed on durable fetches since last asked."""

    def watch_fields(self, watch: dict[str, tuple[str, ...]]) -> None:
        """Which fields of which job `change` rules watch (kept in the revisit rows)."""

    # The web console's reads.
    def domain_queues(self) -> Collection[DomainQueue]:
        """Every domain this master queued: the queues in memory (without a
        copy), and those of done domains it knows from its state file."""

    def domain_counters(self) -> DomainCounters: ...

    def robots_of(self, host: str) -> list[tuple[str, bool, float]]:
        """(origin, allow_all, age in s) of the robots.txt notes of a host."""

    def dead_letter_page(self, offset: int, limit: int) -> tuple[int, list[DeadURL]]:
        """How many dead letters there are, and one page of them, the newest first."""

    def open_alerts(self) -> list[OpenAlert]: ...

    def recent_alerts(self) -> list[Event]:
        """The last alert events (firing, repeated, resolved), newest last."""

    def recent_errors(self) -> list[RecentError]:
        """The last failed fetches, newest last."""

    async def recent_changes(self, limit: int) -> list[dict[str, Any]] | None:
        """The latest changes of revisited pages, newest first; None when the
        store cannot list them cheaply. StoreError when it cannot be read."""

    # The console's URL and domain pages.
    def recent_fetches(self) -> list[RecentFetch]:
        """The last fetches of any outcome, newest last."""

    def revisit_entry(self, fp: bytes) -> Entry | None:
        """A known URL's row of the revisit schedule (None: not revisited)."""

    def revisit_policy(self, job: str) -> RevisitPolicy | None: ...

    def domain_revisits(self, domain: str) -> tuple[int, int]:
        """Checks of known URLs of the domain since start, and the changes they found."""

    def discovery_buckets(self) -> dict[str, list[tuple[float, float]]]:
        """Per feeds job, its discovery latency histogram since start:
        (upper bound in seconds, cumulative count), the last bound infinite."""

    def captures(self, fp: bytes, limit: int) -> tuple[str, list[Capture]] | None:
        """The WARC directory and where the page's latest `limit` fetches were
        archived, newest first; None when the master writes no archive."""

    async def stored_page(self, fp: bytes) -> PageRecord | None:
        """A page's stored record with its body; None if not stored (or the
        store cannot read one back). StoreError when it cannot be read."""

    async def page_versions(
        self, job: str, url: str, offset: int, limit: int
    ) -> tuple[int, list[Version]] | None:
        """How many versions a page has, and `limit` from `offset`, newest
        first, with the one before them; None when the store cannot list them."""

    async def keyed_item(self, job: str, key: str) -> KeyedItem | None:
        """One keyed item; None if there is none (or the store cannot read one)."""

    # Actions.
    def retry_dead_letters(self, fps: Iterable[bytes]) -> int:
        """Mark dead letters for retry (re-queued within master.dead_letter_poll)."""

    def admit_seeds(
        self,
        seeds: Sequence[tuple[RequestSpec | str, str]],
        invalid: list[tuple[int, str]] | None = None,
    ) -> int: ...

    def pause_job(self, job: str) -> None: ...

    def resume_job(self, job: str) -> None: ...

    def delete_job(self, job: str) -> int:
        """Drop the job and its queued URLs; returns how many were dropped."""
