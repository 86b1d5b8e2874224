"""What the master counts of every page a worker answered, before judging it
(stored, retried or refused): HTTP statuses, failures by kind and by domain,
bytes, fetch times; the console's recent pages; the discovery figures of
feeds jobs and the tallies of article jobs."""

from __future__ import annotations

import time
from collections import Counter

from nadird.common.urls import domain_of
from nadird.master.observe.discovery import Discovery
from nadird.master.observe.metrics import MasterMetrics
from nadird.master.results.by_job import JobTallies
from nadird.master.results.feed_links import FeedLinks
from nadird.master.results.recent import PageLog
from nadird.master.revisits.scheduler import Revisits
from nadird.master.state.frontier_db import FrontierDB
from nadird.protocol.messages import PageResult


class PageObserver:
    def __init__(
        self,
        stats: Counter[str],
        tallies: JobTallies,
        metrics: MasterMetrics,
        revisits: Revisits,
        db: FrontierDB,
    ) -> None:
        self._stats, self._tallies, self._metrics = stats, tallies, metrics
        self._revisits = revisits  # its jobs are admission's: reloads and deletions show
        self.errors: Counter[str] = Counter()  # failed attempts by kind (not HTTP statuses)
        self.domain_errors: Counter[str] = Counter()
        self.statuses: Counter[int] = Counter()  # fetched pages by final HTTP status
        self.page_log = PageLog()  # recent failures, last status by domain (console)
        # Feeds jobs: articles by source, latency, what their hubs named
        # (kept in frontier.db), told of new articles once admitted.
        self.discovery = Discovery(db.feed_named)
        metrics.registry.register(self.discovery)
        self.feed_links = FeedLinks(revisits, self.discovery)

    def observe(self, page: PageResult, job: str) -> None:
        self.page_log.observe(page)
        jobs = self._revisits.jobs
        spec = jobs.get(job)
        if spec is not None and spec.feeds:
            self.discovery.on_page(page, spec, time.time(), self._revisits.is_hub(page.fp))
        if page.status:  # a response came back: a fetched page, whatever its status
            self._metrics.fetch_seconds.observe(page.elapsed)
            self.statuses[page.status] += 1
        if page.body:
            self._stats["bytes"] += len(page.body)
        self._tallies.articles.observe(page, job, jobs)
        kind = page.error_kind
        if kind is not None:
            self.errors[kind.value] += 1
            domain = domain_of(page.url)
            self.domain_errors[domain] += 1
            self._tallies.failed(job, domain)
