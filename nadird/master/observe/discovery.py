"""How soon new articles are had, for jobs with `feeds:` (job/feeds.py).

A feed or sitemap result states, per entry, its URL and often its
publication date (worker/feed_page.py puts them in the page's `entries`).
Once its links are admitted, the new articles it names are noted by
fingerprint (`named`, kept in frontier.db through an EntryBook:
entry_fields.py); when an article's own result comes in, the time from its
stated publication to now is its discovery latency. Only entries published
after the master first read their feed are timed: the ones listed then are
as old as the site, not as slow as the crawler (they are counted all the
same). Articles are counted by the source that named them first: feed,
sitemap, hub (the links of a hub page: by address, `hubs`, or learned,
master/revisits/learned_hubs.py) or link (any other page). What an entry
stated (title, dates) fills its article's item where the page states
nothing. Entries a feed listed but could not give (no link, an unreadable
date, past max_entries) are counted by reason.

The namings survive a restart; the counts and latencies are the process's
(a restarted master counts afresh, as Prometheus counters do).
"""

from __future__ import annotations

import statistics
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from nadird.common.urls import domain_of
from nadird.job.feeds import FeedsSpec, is_hub, is_listing
from nadird.job.spec import Job
from nadird.master.observe.entry_fields import EntryBook, Named, fill, named_by_entry
from nadird.protocol.messages import PageResult

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


def _summary(page: PageResult) -> dict[str, Any] | None:
    """The page's feed summary when the worker read it as a feed or sitemap."""
    summary = page.data.get("_feed") if page.data else None
    return summary if isinstance(summary, dict) else None


class Discovery(Collector):
    def __init__(self, book: EntryBook) -> None:
        self._book = book
        self.found: Counter[tuple[str, str]] = Counter()  # (job, source) -> articles
        self.failed: Counter[tuple[str, str]] = Counter()  # (job, reason) -> entries
        self._latest: dict[tuple[str, str], deque[float]] = {}
        self._counts: dict[str, list[int]] = {}  # job -> histogram bucket counts
        self._sums: dict[str, float] = {}
        self.filled = 0  # articles given at least one field by their entry (this run)

    def on_page(self, page: PageResult, job: Job, now: float, hub: bool = False) -> None:
        """Note a result of a `feeds:` job as it comes in (`hub`: the page
        was a hub, by what it answered or found, before this fetch)."""
        if not isinstance(job.feeds, FeedsSpec):
            return
        summary = _summary(page)
        if summary is not None:
            self._book.watched_since(page.fp, now)  # from its first read, even empty
            for reason in FAILED_REASONS:
                count = summary.get(reason)
                if isinstance(count, int) and count > 0:
                    self.failed[(job.name, reason)] += count
        elif hub or is_hub(page.url, job.feeds):
            return
        elif page.status == 200 and not page.error and not is_listing(page.url, job.hub_patterns):
            self._arrived(page, job.name, now)

    def named(
        self, page: PageResult, job: Job, new: Sequence[bytes], hub: bool, now: float
    ) -> None:
        """Note the new articles a page of a `feeds:` job named, once admitted
        (`new`: their fingerprints; `hub`: the page is a hub after this fetch)."""
        if not isinstance(job.feeds, FeedsSpec):
            return
        summary = _summary(page)
        if summary is not None:
            self._note_entries(page, summary, set(new), self._book.watched_since(page.fp, now), now)
        elif new and (hub or is_hub(page.url, job.feeds)):
            known = self._book.get_many(new)
            self._book.put_many([(fp, Named("hub")) for fp in new if fp not in known], now)

    def _note_entries(
        self, page: PageResult, summary: dict[str, Any], new: set[bytes], since: float, now: float
    ) -> None:
        """The feed's entries: new articles noted, the ones a hub page named
        first given the entry's date and fields."""
        source = "feed" if summary.get("kind") in FEED_KINDS else "sitemap"
        fps = dict(zip(page.links, page.link_fps, strict=True))
        entries = page.data.get("entries")
        listed: dict[bytes, Named] = {}
        for entry in entries if isinstance(entries, list) else []:
            fp = fps.get(str(entry.get("url"))) if isinstance(entry, dict) else None
            if fp is None or fp in listed:
                continue
            published = _epoch(entry.get("published"))
            timed = published if published is not None and published >= since else None
            listed[fp] = named_by_entry(source, timed, entry)
        waiting = self._book.get_many([fp for fp in listed if fp not in new])
        rows = [(fp, named) for fp, named in listed.items() if fp in new]
        for fp, known in waiting.items():
            merged = known.merged(listed[fp])
            if merged is not known:
                rows.append((fp, merged))
        self._book.put_many(rows, now)

    def _arrived(self, page: PageResult, job: str, now: float) -> None:
        named = self._book.take(page.fp)
        if named is not None and page.data is not None and fill(named, page.data):
            self.filled += 1
        source = "link" if named is None else named.source
        self.found[(job, source)] += 1
        if named is None or named.timed is None:
            return
        latency = max(0.0, now - named.timed)
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
