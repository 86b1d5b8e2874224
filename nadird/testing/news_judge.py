"""How well a crawl followed a living news web (news.py), from the server's
own access log: which articles published during the crawl were fetched, how
long after they appeared, what share of requests went to archive pages past
their first, and the shortest gap between two requests to one site.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import pairwise
from typing import Any
from urllib.parse import parse_qs, urlsplit

from nadird.testing.access import AccessEntry
from nadird.testing.news import NewsWeb


@dataclass(frozen=True)
class NewsReport:
    published: int  # articles that appeared in the judged window
    fetched: int  # of those, fetched (a 200) before the crawl ended
    latency_p50: float | None  # seconds from appearing to the first fetch
    latency_p90: float | None
    latency_max: float | None
    requests: int
    archive_requests: int  # listing pages past their first (?page=N, N >= 2)
    min_gap: float | None  # shortest time between two requests to one site
    min_gap_at: str = ""  # where: host, the two paths
    gaps_below: int = 0  # gaps shorter than the `delay` given to judge_news, less SLACK

    @property
    def share_fetched(self) -> float:
        return self.fetched / self.published if self.published else 1.0

    @property
    def archive_share(self) -> float:
        return self.archive_requests / self.requests if self.requests else 0.0

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["share_fetched"] = round(self.share_fetched, 4)
        out["archive_share"] = round(self.archive_share, 4)
        return out


def _quantile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def _archive(path: str) -> bool:
    page = parse_qs(urlsplit(path).query).get("page", ["1"])[0]
    return page.isdigit() and int(page) >= 2


# Arrival times are read right to a kernel clock tick: up to two ticks off a gap.
SLACK = 0.03


def judge_news(
    news: NewsWeb, log: Sequence[AccessEntry], since: float, until: float, delay: float = 0.0
) -> NewsReport:
    """Judge the articles that appeared in [since, until) (wall times) by the log."""
    first: dict[tuple[str, str], float] = {}
    times: dict[str, list[tuple[float, str]]] = defaultdict(list)
    archive = 0
    for entry in log:
        times[entry.host].append((entry.arrived, entry.path))
        archive += _archive(entry.path)
        if entry.status == 200 and entry.path.startswith("/articles/"):
            key = (entry.host, entry.path)
            first[key] = min(first.get(key, entry.arrived), entry.arrived)
    latencies = []
    published = news.published(since, until)
    for site, i, at in published:
        seen = first.get((site.host, f"/articles/{i}"))
        if seen is not None:
            latencies.append(max(0.0, seen - at))
    latencies.sort()
    gaps = [
        (b[0] - a[0], f"{host} {a[1]} -> {b[1]}")
        for host, ts in times.items()
        for a, b in pairwise(sorted(ts))
    ]
    least = min(gaps, default=None)
    return NewsReport(
        published=len(published),
        fetched=len(latencies),
        latency_p50=_quantile(latencies, 0.5),
        latency_p90=_quantile(latencies, 0.9),
        latency_max=latencies[-1] if latencies else None,
        requests=len(log),
        archive_requests=archive,
        min_gap=least[0] if least else None,
        min_gap_at=least[1] if least else "",
        gaps_below=sum(gap < delay - SLACK for gap, _ in gaps),
    )
