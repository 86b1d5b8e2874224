"""Prometheus metrics of one master, on a registry of its own.

Counters that the master already keeps (MasterCore.stats) are read at scrape
time by a collector rather than counted twice; histograms are observed as
results and leases come in. Per-domain series exist only for a bounded top-N.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

TOP_DOMAINS = 20

# stats key -> (metric name, help); exported as counters.
COUNTERS = {
    "pages_ok": ("nadird_pages_ok", "Pages stored without error"),
    "pages_error": ("nadird_pages_error", "Pages stored with an error (permanent failures)"),
    "bytes": ("nadird_bytes", "Body bytes received in results"),
    "retries": ("nadird_retries", "Transient failures scheduled for another try"),
    "dead_letters": ("nadird_dead_letters", "URLs moved to the dead letters"),
    "dropped_messages": ("nadird_dropped_messages", "Malformed or unexpected messages dropped"),
    "bags_leased": ("nadird_bags_leased", "Bags handed to workers"),
    "leases_expired": ("nadird_leases_expired", "Leases that expired"),
    "leases_reclaimed": ("nadird_leases_reclaimed", "Leases taken back from workers"),
    "late_results": ("nadird_late_results", "Results that arrived outside a live lease"),
}


class MasterMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.fetch_seconds = Histogram(
            "nadird_fetch_seconds",
            "Fetch latency reported by workers",
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=self.registry,
        )
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
        errors = CounterMetricFamily("nadird_errors", "Failed fetches by kind", labels=["kind"])
        for kind, count in sorted(state["errors"].items()):
            errors.add_metric([kind], count)
        yield errors
        refused = CounterMetricFamily(
            "nadird_refused_results", "Results messages dropped, by reason", labels=["reason"]
        )
        for reason, count in sorted(state["refused"].items()):
            refused.add_metric([reason], count)
        yield refused
        for name, text, key in (
            ("nadird_queue_urls", "URLs queued, leased or being stored", "queued"),
            ("nadird_leases", "Leases out", "leases"),
            ("nadird_store_pending", "Records waiting to be written", "store_pending"),
            ("nadird_seen_urls", "URLs admitted to the seen set", "seen"),
            ("nadird_overflow_urls", "URLs dropped by the queue caps", "overflow"),
            ("nadird_spool_records", "Records in the store's outage spool", "spool_records"),
        ):
            yield GaugeMetricFamily(name, text, value=state.get(key, 0))
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
