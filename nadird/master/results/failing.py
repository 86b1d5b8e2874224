"""Failed attempts: retried with back-off, then handed to the job's fallback
job (on_failure, fallback.py) or dead-lettered; invalid items handed on.

The one place that decides what happens to a URL a job failed; MasterCore
(core.py) owns a FailureRouter and hands it the parts of the master it needs.
"""

from __future__ import annotations

from collections import Counter

from nadird.common.logs import gate
from nadird.config import Config
from nadird.items.schema import invalid_fields
from nadird.master.frontier.admission import Admission
from nadird.master.frontier.queues import Frontier
from nadird.master.leasing.leases import Lease
from nadird.master.observe import trace
from nadird.master.results.blocking import BlockStreaks
from nadird.master.results.by_job import JobTallies
from nadird.master.results.fallback import Fallbacks
from nadird.master.results.retries import backoff, describe
from nadird.master.revisits.scheduler import Revisits
from nadird.master.row import Row
from nadird.protocol.messages import PageResult


class FailureRouter:
    def __init__(
        self,
        config: Config,
        frontier: Frontier,
        admission: Admission,
        revisits: Revisits,
        fallbacks: Fallbacks,
        blocks: BlockStreaks,
        tallies: JobTallies,
        stats: Counter[str],
        invalid: Counter[tuple[str, str]],
    ) -> None:
        self.config = config  # replaced on a reload (MasterCore.apply_config)
        self.frontier = frontier
        self.admission = admission
        self.revisits = revisits
        self.fallbacks = fallbacks
        self.blocks = blocks
        self.tallies = tallies
        self.stats = stats
        self.invalid = invalid  # invalid items by (job, field)

    def throttled(self, row: Row, wait: float, lease: Lease) -> None:
        """A 429/503: an attempt like any transient failure, retried after the
        domain's rest (Retry-After), dead-lettered when the tries run out."""
        job = self.admission.jobs.get(row.job)
        attempts = row.attempts + 1
        error = "http: throttled (429/503)"
        self.blocks.hit(lease.domain, 1, row.job)
        if job is None or attempts > job.max_retries:
            self._dead(row, lease, attempts, error)
            return
        self.frontier.retry(row, attempts, wait, error)
        self.stats["retries"] += 1
        if gate.debug:
            trace.retried(row, lease, attempts, wait, error)

    def failed(self, page: PageResult, row: Row | None, lease: Lease | None) -> None:
        """A transient failure: back off and retry, or dead-letter when out of tries."""
        if row is None or lease is None:
            return  # a late failure changes nothing: the URL is still queued
        job = self.admission.jobs.get(row.job)
        attempts = row.attempts + 1
        error = describe(page)
        if job is None or attempts > job.max_retries:
            self._dead(row, lease, attempts, error)
            return
        master = self.config.master
        delay = backoff(attempts, master.retry_base_delay, master.retry_max_delay)
        self.frontier.retry(row, attempts, delay, error)
        self.stats["retries"] += 1
        if gate.debug:
            trace.retried(row, lease, attempts, delay, error)

    def _dead(self, row: Row, lease: Lease, attempts: int, error: str) -> None:
        """Out of tries: the URL goes to its job's on_failure job, else it
        becomes a dead letter."""
        if self.fallbacks.hand_over(row, error):
            self.stats["fallbacks"] += 1
            return
        self.frontier.dead(row, error, attempts)
        self.revisits.dead(row)
        self.stats["dead_letters"] += 1
        self.tallies.dead_letters[row.job] += 1
        trace.dead_letter(row, lease, attempts, error)

    def count_invalid(self, page: PageResult, job: str) -> list[str]:
        invalid = invalid_fields(page.data)
        self.invalid.update((job, name) for name in invalid)
        return invalid

    def invalid_handed_over(self, page: PageResult, row: Row, job: str) -> bool:
        """Count an invalid item; True if its URL went to the job's fallback
        job instead of being stored."""
        invalid = self.count_invalid(page, job)
        if invalid and self.fallbacks.hand_over(row, "invalid item: " + ", ".join(invalid)):
            self.stats["fallbacks"] += 1
            return True
        return False
