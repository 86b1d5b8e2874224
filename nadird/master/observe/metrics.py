"""Prometheus metrics of one master, on a registry of its own.

Counters that the master already keeps (MasterCore.stats) are read at scrape
time by a collector rather than counted twice; histograms are observed as
results and leases come in. Per-domain series exist only for a bounded top-N.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from nadird.common.http_status import status_classes

TOP_DOMAINS = 20

# stats key -> (metric name, help); exported as counters.
COUNTERS = {
    "pages_ok": ("nadird_pages_ok", "Pages stored without an error (any HTTP status)"),
    "pages_error": ("nadird_pages_error", "Pages stored with an error (no page, or unusable)"),
    "bytes": ("nadird_bytes", "Body bytes received in results"),
    "retries": ("nadird_retries", "Transient failures scheduled for another try"),
    "dead_letters": ("nadird_dead_letters", "URLs moved to the dead letters"),
    "dropped_messages": ("nadird_dropped_messages", "Malformed or unexpected messages dropped"),
    "bags_leased": ("nadird_bags_leased", "Bags handed to workers"),
    "leases_expired": ("nadird_leases_expired", "Leases that expired"),
    "leases_reclaimed": ("nadird_leases_reclaimed", "Leases taken back from workers"),
    "leases_adopted": ("nadird_leases_adopted", "Leases of a previous run taken over"),
    "leases_unclaimed": (
        "nadird_leases_unclaimed",
        "Leases of a previous run nobody claimed (leased again after the hold)",
    ),
    "adoptions_refused": (
        "nadird_adoptions_refused",
        "Claims of a previous run's lease refused (unknown lease, other holder, bad token)",
    ),
    "late_results": ("nadird_late_results", "Results that arrived outside a live lease"),
    "handler_errors": (
        "nadird_handler_errors",
        "Messages or ticks a master loop failed on with an unexpected error (it started again)",
    ),
    "login_failures": (
        "nadird_login_failures",
        "Logins that failed (refused, or no session in the answer); a domain pauses after a few",
    ),
    "rejected_item_keys": (
        "nadird_rejected_item_keys",
        "Items whose worker's key was not the one the master made (marked invalid)",
    ),
    "future_fetch_times": (
        "nadird_future_fetch_times",
        "Pages whose fetch time was later than the master's clock allows (set to the master's)",
    ),
    "waits_capped": (
        "nadird_waits_capped",
        "Bag waits longer than any fetch setting asks for, cut to the longest",
    ),
    "robots_notes_refused": (
        "nadird_robots_notes_refused",
        "robots.txt notes a bag left for an origin outside its domain (not kept)",
    ),
    "history_trimmed": (
        "nadird_history_trimmed",
        "Page history versions deleted by the jobs' history retention (history:)",
    ),
    "warc_records": ("nadird_warc_records", "WARC records written (warc:)"),
    "warc_bytes": ("nadird_warc_bytes", "Bytes written to the WARC files"),
    "warc_revisits": ("nadird_warc_revisits", "Revisit records written instead of copies"),
    "warc_failures": ("nadird_warc_failures", "WARC writes that failed (a full disk)"),
    "warc_captures_dropped": (
        "nadird_warc_captures_dropped",
        "Captures dropped from archive.db because their WARC file left the directory",
    ),
    "warc_bad_exchanges": (
        "nadird_warc_bad_exchanges",
        "Exchanges a worker sent that could not be archived (a head no parser takes)",
    ),
    "alerts_sent": ("nadird_alerts_sent", "Alerts a channel took"),
    "alerts_failed": ("nadird_alerts_failed", "Alerts given up after their last try"),
    "alerts_retries": ("nadird_alerts_retries", "Alert deliveries tried again"),
    "alerts_dropped": ("nadird_alerts_dropped", "Alerts dropped: channel queue full, or at stop"),
    "alerts_not_numeric": (
        "nadird_alerts_not_numeric",
        "Changes a numeric change condition could not compare (a value no number)",
    ),
}


class PageHistogram(Collector):
    """A histogram observed once per page on the master's hot path: a bisect
    and a list increment (prometheus_client's Histogram takes a lock and
    costs ten times as much); the cumulative buckets are built at scrape time."""

    def __init__(self, name: str, text: str, buckets: tuple[float, ...]) -> None:
        self._name = name
        self._text = text
        self._bounds = buckets
        self._counts = [0] * (len(buckets) + 1)  # the last one is +Inf
        self._sum = 0.0

    def observe(self, value: float) -> None:
        # bisect_left: a value equal to a bound belongs to that bucket (le).
        self._counts[bisect.bisect_left(self._bounds, value)] += 1
        self._sum += value

    def collect(self) -> Iterator[Metric]:
        cumulative, total = [], 0
        for bound, count in zip((*self._bounds, float("inf")), self._counts, strict=True):
            total += count
            cumulative.append((_le(bound), total))
        yield HistogramMetricFamily(self._name, self._text, buckets=cumulative, sum_value=self._sum)


def _le(bound: float) -> str:
    return "+Inf" if bound == float("inf") else repr(float(bound))


class MasterMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.fetch_seconds = PageHistogram(
            "nadird_fetch_seconds",
            "Fetch time of each fetched page (a response came back), as the worker measured it",
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
        )
        self.registry.register(self.fetch_seconds)
        self.lease_seconds = Histogram(
            "nadird_lease_seconds",
            "Time from granting a lease to closing it",
            buckets=(0.1, 0.5, 1, 5, 15, 30, 60, 300, 900),
            registry=self.registry,
        )

    def watch(self, read: Callable[[], dict[str, Any]]) -> None:
        """Export the master's state, read at scrape time."""
        self.registry.register(_StateCollector(read))

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class _StateCollector(Collector):
    def __init__(self, read: Callable[[], dict[str, Any]]) -> None:
        self._read = read

    def collect(self) -> Iterator[Metric]:
        state = self._read()
        stats: dict[str, int] = state["stats"]
        for key, (name, text) in COUNTERS.items():
            yield CounterMetricFamily(name, text, value=stats.get(key, 0))
        yield _by_label(
            "nadird_errors", "Failed fetch attempts by kind (retried ones too)", ["kind"],
            state["errors"].items(),
        )  # fmt: skip
        yield _by_label(
            "nadird_refused_results", "Results messages dropped, by reason", ["reason"],
            state["refused"].items(),
        )  # fmt: skip
        yield _by_label(
            "nadird_rejected_links",
            "Links whose worker's fingerprint or URL the master did not take as sent, by reason"
            " (fingerprint, canonical: admitted under the master's; invalid_url, scope: dropped)",
            ["reason"], state.get("rejected_links", {}).items(),
        )  # fmt: skip
        yield _by_label(
            "nadird_invalid_items", "Stored items that failed their job's schema, by job and field",
            ["job", "field"], state.get("invalid", {}).items(),
        )  # fmt: skip
        yield _by_label(
            "nadird_fallback_extractions",
            "Item fields that took their generic article step (every selector before found"
            " nothing), by job and field",
            ["job", "field"], state.get("fallback_extractions", {}).items(),
        )  # fmt: skip
        yield _by_label(
            "nadird_article_given_up",
            "Pages whose article extraction was given up (over_budget, too_large, engine_failed,"
            " no_document), by job and reason",
            ["job", "reason"], state.get("article_given_up", {}).items(),
        )  # fmt: skip
        yield _by_label(
            "nadird_near_duplicates",
            "Articles whose text is a near-duplicate of one seen before in the job, by job and"
            " action (marked: near_duplicate_of set; dropped: stored without its item)",
            ["job", "action"], state.get("near_duplicates", {}).items(),
        )  # fmt: skip
        yield _by_label(
            "nadird_http_status", "Fetched pages by final HTTP status class", ["class"],
            status_classes(state["statuses"]).items(),
        )  # fmt: skip
        yield CounterMetricFamily(
            "nadird_state_write_failures",
            "Failed writes of the state directory or the store (disk full...)",
            value=state["state_write_failures"],
        )
        for name, text, key in STATE_GAUGES:
            yield GaugeMetricFamily(name, text, value=state.get(key, 0))
        for name, text, key in STATE_COUNTERS:
            yield CounterMetricFamily(name, text, value=state.get(key, 0))
        workers = GaugeMetricFamily("nadird_workers", "Workers by status", labels=["status"])
        for status, count in sorted(state["workers_by_status"].items()):
            workers.add_metric([status], count)
        yield workers
        top = GaugeMetricFamily(
            "nadird_domain_queue_urls",
            f"Queued URLs of the {TOP_DOMAINS} largest domains",
            labels=["domain"],
        )
        for domain, rows in heapq.nlargest(TOP_DOMAINS, state["domains"], key=lambda d: d[1]):
            top.add_metric([domain], rows)
        yield top


def _by_label(
    name: str, text: str, labels: list[str], counts: Iterable[tuple[Any, int]]
) -> CounterMetricFamily:
    """A counter with one sample per label value (or tuple of values), sorted."""
    family = CounterMetricFamily(name, text, labels=labels)
    for value, count in sorted(counts):
        family.add_metric(list(value) if isinstance(value, tuple) else [value], count)
    return family


# Gauges and counters read from the status dict, by (name, help, key).
STATE_GAUGES: tuple[tuple[str, str, str], ...] = (
    ("nadird_queue_urls", "URLs queued, leased or being stored", "queued"),
    ("nadird_leases", "Leases out", "leases"),
    ("nadird_store_pending", "Records waiting to be written", "store_pending"),
    ("nadird_seen_urls", "URLs admitted to the seen set", "seen"),
    ("nadird_overflow_urls", "URLs dropped by the queue caps", "overflow"),
    ("nadird_spool_records", "Records in the store's outage spool", "spool_records"),
    ("nadird_state_healthy", "1 while state and store writes work", "state_healthy"),
    (
        "nadird_loops_healthy",
        "1 while every master loop runs; 0 once one ended (the process is stopping)",
        "loops_healthy",
    ),
    ("nadird_revisit_due", "Known URLs whose revisit is due", "revisit_due"),
    ("nadird_revisit_overdue", "Revisits due for over a minute", "revisit_overdue"),
    (
        "nadird_revisit_checks_per_second",
        "Revisits fetched per second (last minute)",
        "revisit_checks_per_second",
    ),
    (
        "nadird_revisit_etag_ignored_hosts",
        "Hosts whose ETags never gave a 304: revisits send them no If-None-Match",
        "revisit_etag_ignored_hosts",
    ),
)
STATE_COUNTERS: tuple[tuple[str, str, str], ...] = (
    ("nadird_revisit_checks", "Known URLs fetched again", "revisit_checks"),
    ("nadird_revisit_changes", "Revisits whose signature changed", "revisit_changes"),
    ("nadird_revisit_not_modified", "Revisits answered 304", "revisit_not_modified"),
    (
        "nadird_revisit_etag_withheld",
        "ETags left out of bags (their host's ETags do not work)",
        "revisit_etag_withheld",
    ),
    (
        "nadird_revisit_rescheduled_rows",
        "Revisit rows given a new due time after their job's policy changed",
        "revisit_rescheduled_rows",
    ),
)
