"""What the master counts of every page a worker answered, before judging it
(stored, retried or refused): HTTP statuses, failures by kind and by domain,
bytes, fetch times; the console's recent pages; the discovery figures of
feeds jobs and the tallies of article jobs."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping

from nadird.common.urls import domain_of
from nadird.job.spec import Job
from nadird.master.observe.discovery import Discovery
from nadird.master.observe.entry_fields import EntryBook
from nadird.master.observe.metrics import MasterMetrics
from nadird.master.results.by_job import JobTallies
from nadird.master.results.recent import PageLog
from nadird.protocol.messages import PageResult


class PageObserver:
    def __init__(
        self,
        stats: Counter[str],
        tallies: JobTallies,
        metrics: MasterMetrics,
        jobs: Mapping[str, Job],
        hubs: tuple[EntryBook, Callable[[bytes], bool]],
    ) -> None:
        self._stats, self._tallies, self._metrics = stats, tallies, metrics
        # Admission's own mapping (deletions show here); a reload gives the
        # master a new one, which MasterCore.apply_config sets here too.
        self.jobs = jobs
        self.errors: Counter[str] = Counter()  # failed attempts by kind (not HTTP statuses)
        self.domain_errors: Counter[str] = Counter()
        self.statuses: Counter[int] = Counter()  # fetched pages by final HTTP status
        self.page_log = PageLog()  # recent failures, last status by domain (console)
        # Feeds jobs: articles by source, latency; what hubs named is kept
        # in `hubs[0]`, hubs[1] says whether a page was a hub before a fetch.
        book, self._was_hub = hubs
        self.discovery = Discovery(book)
        metrics.registry.register(self.discovery)

    def observe(self, page: PageResult, job: str) -> None:
        self.page_log.observe(page)
        spec = self.jobs.get(job)
        if spec is not None and spec.feeds:
            self.discovery.on_page(page, spec, time.time(), self._was_hub(page.fp))
        if page.status:  # a response came back: a fetched page, whatever its status
            self._metrics.fetch_seconds.observe(page.elapsed)
            self.statuses[page.status] += 1
        if page.body:
            self._stats["bytes"] += len(page.body)
        self._tallies.articles.observe(page, job, self.jobs)
        kind = page.error_kind
        if kind is not None:
            self.errors[kind.value] += 1
            domain = domain_of(page.url)
            self.domain_errors[domain] += 1
            self._tallies.failed(job, domain)
