"""What the Crawl and domain pages show of feeds and articles, read from
/api/stats (status.full): per job, the articles each source named first,
the feed entries left out by reason, discovery latency per domain
(master/observe/discovery.py), and the near-duplicates, generic-step
fields and given-up pages of article jobs (master/results/articles.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SOURCES = ("feed", "sitemap", "hub", "link")  # as discovery.py names them
LATENCY_DOMAINS = 20  # domains shown per job on the Crawl page, the most timed first


@dataclass(frozen=True)
class Latency:
    where: str  # a domain (Crawl page) or a job (domain page)
    count: int  # articles timed (the latest 1,000 at most)
    p50: float
    p95: float


@dataclass
class JobDiscovery:
    job: str
    articles: dict[str, int]  # source -> articles, every source in SOURCES order
    failed: dict[str, int]  # reason -> feed entries left out
    timed: int  # articles timed since start, all domains
    latency: list[Latency] = field(default_factory=list)
    more_domains: int = 0  # timed domains not listed
    estimate: tuple[float, float] | None = None  # the job's p50, p95 from its histogram

    @property
    def total(self) -> int:
        return sum(self.articles.values())


@dataclass(frozen=True)
class JobArticles:
    job: str
    near_duplicates: dict[str, int]  # marked / dropped
    fallbacks: dict[str, int]  # field -> pages whose field took the generic step
    given_up: dict[str, int]  # reason -> pages


def discovery(
    stats: Mapping[str, Any], buckets: Mapping[str, list[tuple[float, float]]]
) -> list[JobDiscovery]:
    """One entry per feeds job that saw anything, by job name; `buckets`:
    each job's latency histogram (MasterView.discovery_buckets)."""
    jobs: list[JobDiscovery] = []
    for job, seen in sorted(dict(stats.get("feeds") or {}).items()):
        articles = dict(seen.get("articles") or {})
        timed = [_latency(domain, q) for domain, q in dict(seen.get("latency") or {}).items()]
        timed.sort(key=lambda row: (-row.count, row.where))
        jobs.append(
            JobDiscovery(
                job,
                {source: int(articles.get(source, 0)) for source in SOURCES},
                dict(seen.get("failed_entries") or {}),
                int(dict(seen.get("latency_all") or {}).get("count", 0)),
                timed[:LATENCY_DOMAINS],
                max(0, len(timed) - LATENCY_DOMAINS),
                _estimate(buckets.get(job, [])),
            )
        )
    return jobs


def domain_latency(stats: Mapping[str, Any], domain: str) -> list[Latency]:
    """The domain's discovery latency in each feeds job that timed it."""
    rows = []
    for job, seen in sorted(dict(stats.get("feeds") or {}).items()):
        quantiles = dict(seen.get("latency") or {}).get(domain)
        if quantiles:
            rows.append(_latency(job, quantiles))
    return rows


def articles(stats: Mapping[str, Any]) -> list[JobArticles]:
    """One entry per job with a near-duplicate, a generic step or a page given up."""
    near = dict(stats.get("near_duplicates") or {})
    fallbacks = dict(stats.get("fallback_extractions") or {})
    given_up = dict(stats.get("article_given_up") or {})
    return [
        JobArticles(job, near.get(job, {}), fallbacks.get(job, {}), given_up.get(job, {}))
        for job in sorted({*near, *fallbacks, *given_up})
    ]


def quantile(buckets: list[tuple[float, float]], q: float) -> float | None:
    """The q-quantile of a histogram, (upper bound, cumulative count) in
    order, as Prometheus's histogram_quantile estimates it: linear within
    the bucket it falls in, the highest finite bound past the last one."""
    total = buckets[-1][1] if buckets else 0
    if total <= 0:
        return None
    rank, lower, below = q * total, 0.0, 0.0
    for bound, count in buckets:
        if count >= rank:
            if bound == float("inf"):
                return lower
            inside = count - below
            return lower + (bound - lower) * ((rank - below) / inside if inside else 1.0)
        lower, below = bound, count
    return lower


def _estimate(buckets: list[tuple[float, float]]) -> tuple[float, float] | None:
    p50, p95 = quantile(buckets, 0.5), quantile(buckets, 0.95)
    return None if p50 is None or p95 is None else (p50, p95)


def _latency(where: str, quantiles: Mapping[str, Any]) -> Latency:
    return Latency(where, int(quantiles["count"]), float(quantiles["p50"]), float(quantiles["p95"]))
