"""How soon new articles are had, for jobs with `feeds:` (job/feeds.py).

A feed or sitemap result states, per entry, its URL and often its
publication date (worker/feed_page.py puts them in the page's `entries`).
The entries are remembered by fingerprint (a bounded map, oldest forgotten
first: the latest MAX_PENDING entries are what matters for new articles);
when the article's own result comes in, the time from its stated
publication to now is its discovery latency. Only entries published after
the master first read their feed are timed: the ones listed then are as old
as the site, not as slow as the crawler (they are counted all the same). Articles are counted by the
source that named them first: feed, sitemap, hub (a hub page's links) or
link (any other page). What an entry stated (title, dates) fills its
article's item where the page states nothing (entry_fields.py). Entries a
feed listed but could not give (no link, an unreadable date, past
max_entries) are counted by reason.

Kept in memory: a restarted master counts afresh.
"""

from __future__ import annotations

import statistics
from collections import Counter, OrderedDict, deque
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from nadird.common.urls import domain_of
from nadird.job.feeds import FeedsSpec, is_hub, is_listing
from nadird.job.spec import Job
from nadird.master.observe.entry_fields import EntryFields
from nadird.protocol.messages import PageResult

MAX_PENDING = 200_000  # entries remembered until their article comes in
KEPT = 1000  # latest latencies per (job, domain), for the quantiles
BUCKETS = (1, 2, 5, 10, 15, 30, 60, 300, 900, 3600, 21600, 86400)
FAILED_REASONS = ("no_url", "bad_date", "over_limit")
FEED_KINDS = frozenset({"rss", "atom", "rdf", "json"})


def _epoch(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None


class Discovery(Collector):
    def __init__(self) -> None:
        # fp -> (source, stated publication time or None)
        self._pending: OrderedDict[bytes, tuple[str, float | None]] = OrderedDict()
        self.found: Counter[tuple[str, str]] = Counter()  # (job, source) -> articles
        self.failed: Counter[tuple[str, str]] = Counter()  # (job, reason) -> entries
        self._latest: dict[tuple[str, str], deque[float]] = {}
        self._counts: dict[str, list[int]] = {}  # job -> histogram bucket counts
        self._sums: dict[str, float] = {}
        self.fields = EntryFields()  # what entries stated, for their articles' items
        # feed fp -> when the master first read it (bounded like _pending)
        self._watched: OrderedDict[bytes, float] = OrderedDict()

    def on_page(self, page: PageResult, job: Job, now: float) -> None:
        """Note what a result of a `feeds:` job says."""
        if not isinstance(job.feeds, FeedsSpec):
            return
        summary = page.data.get("_feed") if page.data else None
        if isinstance(summary, dict):
            self._note_entries(page, job.name, summary, self._watch(page.fp, now))
        elif is_hub(page.url, job.feeds):
            self._note_links(page, "hub")
        elif page.status == 200 and not page.error and not is_listing(page.url, job.hub_patterns):
            self._arrived(page, job.name, now)

    def _watch(self, fp: bytes, now: float) -> float:
        """When the feed `fp` was first read (now, the first time)."""
        since = self._watched.setdefault(fp, now)
        if len(self._watched) > MAX_PENDING:
            self._watched.popitem(last=False)
        return since

    def _note_entries(
        self, page: PageResult, job: str, summary: dict[str, Any], since: float
    ) -> None:
        for reason in FAILED_REASONS:
            count = summary.get(reason)
            if isinstance(count, int) and count > 0:
                self.failed[(job, reason)] += count
        source = "feed" if summary.get("kind") in FEED_KINDS else "sitemap"
        fps = dict(zip(page.links, page.link_fps, strict=True))
        entries = page.data.get("entries")
        for entry in entries if isinstance(entries, list) else []:
            fp = fps.get(str(entry.get("url"))) if isinstance(entry, dict) else None
            if fp is None:
                continue
            self.fields.remember(fp, entry)
            published = _epoch(entry.get("published"))
            stated = published if published is not None and published >= since else None
            known = self._pending.get(fp)
            if known is None:
                self._remember(fp, source, stated)
            elif known[1] is None and stated is not None:  # named first by a hub page
                self._pending[fp] = (known[0], stated)

    def _note_links(self, page: PageResult, source: str) -> None:
        for fp in page.link_fps:
            if fp not in self._pending:
                self._remember(fp, source, None)

    def _remember(self, fp: bytes, source: str, published: float | None) -> None:
        self._pending[fp] = (source, published)
        if len(self._pending) > MAX_PENDING:
            self._pending.popitem(last=False)

    def _arrived(self, page: PageResult, job: str, now: float) -> None:
        if page.data is not None:
            self.fields.fill(page.fp, page.data)
        source, published = self._pending.pop(page.fp, ("link", None))
        self.found[(job, source)] += 1
        if published is None:
            return
        latency = max(0.0, now - published)
        key = (job, domain_of(page.url))
        self._latest.setdefault(key, deque(maxlen=KEPT)).append(latency)
        counts = self._counts.setdefault(job, [0] * (len(BUCKETS) + 1))
        counts[next((i for i, b in enumerate(BUCKETS) if latency <= b), len(BUCKETS))] += 1
        self._sums[job] = self._sums.get(job, 0.0) + latency

    # ------------------------------------------------------------ reading
    def status(self) -> dict[str, Any]:
        """Per job: articles by source, failed entries, latency p50/p95 per domain."""
        jobs: dict[str, dict[str, Any]] = {}
        for (job, source), count in sorted(self.found.items()):
            jobs.setdefault(job, {}).setdefault("articles", {})[source] = count
        for (job, reason), count in sorted(self.failed.items()):
            jobs.setdefault(job, {}).setdefault("failed_entries", {})[reason] = count
        for (job, domain), values in sorted(self._latest.items()):
            latency = jobs.setdefault(job, {}).setdefault("latency", {})
            latency[domain] = _quantiles(values)
        for job, counts in self._counts.items():
            jobs[job]["latency_all"] = {"count": sum(counts)}
        return jobs

    def collect(self) -> Iterator[Metric]:
        found = CounterMetricFamily(
            "nadird_feed_articles",
            "Articles of feeds jobs fetched, by the source that named them first",
            labels=["job", "source"],
        )
        for (job, source), count in sorted(self.found.items()):
            found.add_metric([job, source], count)
        yield found
        failed = CounterMetricFamily(
            "nadird_feed_entries_failed",
            "Feed and sitemap entries left out, by reason (no_url, bad_date, over_limit)",
            labels=["job", "reason"],
        )
        for (job, reason), count in sorted(self.failed.items()):
            failed.add_metric([job, reason], count)
        yield failed
        latency = HistogramMetricFamily(
            "nadird_discovery_latency_seconds",
            "Seconds from an article's stated publication to its result at the master",
            labels=["job"],
        )
        for job, counts in sorted(self._counts.items()):
            cumulative, total = [], 0
            for bound, count in zip((*BUCKETS, float("inf")), counts, strict=True):
                total += count
                cumulative.append(("+Inf" if bound == float("inf") else repr(float(bound)), total))
            latency.add_metric([job], cumulative, self._sums[job])
        yield latency


def _quantiles(values: deque[float]) -> dict[str, float | int]:
    ordered = sorted(values)
    if len(ordered) == 1:
        return {"count": 1, "p50": round(ordered[0], 3), "p95": round(ordered[0], 3)}
    cuts = statistics.quantiles(ordered, n=100, method="inclusive")
    return {"count": len(ordered), "p50": round(cuts[49], 3), "p95": round(cuts[94], 3)}
