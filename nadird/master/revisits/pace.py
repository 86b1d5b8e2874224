"""How many fetches a second a domain can take: the bound its revisit plan
shares among its pages (revisit_plan.py).

A worker paces a domain at its effective delay between two request starts
(worker/fetch/throttle.py): the job's delay (else politeness.delay), or the
robots.txt Crawl-delay if longer (capped by fetch.throttle.max_crawl_delay).
`domain_concurrency` does not multiply that: the pacer spaces the starts of
all of a bag's lanes, and the master leases a domain to one bag at a time.
It bounds the rate another way: at most `concurrency` fetches are in flight,
so with fetches taking L seconds no more than concurrency / L start each
second (with one lane, a slow page delays the next start past the delay).
The bound is therefore min(1 / effective delay, concurrency / L), L the
domain's mean fetch time (an exponential average of results' `elapsed`).
The adaptive delay (latency / target_concurrency) lies under that bound
when target_concurrency <= concurrency (the default 1); it is left out.

Crawl-delays come from the robots.txt files workers pass on through the
master (robots_notes.py), per origin; a domain takes its origins' longest,
as the worker's pace does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from urllib.parse import urlsplit

from nadird.common.urls import registrable_domain
from nadird.config import Config
from nadird.job.spec import Job

LATENCY_WEIGHT = 0.1  # share of the newest fetch time in the domain's average


def origin_domain(origin: str) -> str:
    return registrable_domain(urlsplit(origin).hostname or "")


class PlanPace:
    def __init__(self) -> None:
        self.politeness_delay = 1.0
        self.concurrency = 1  # politeness.domain_concurrency
        self.max_crawl_delay = 30.0  # fetch.throttle.max_crawl_delay
        self._crawl: dict[str, dict[str, float]] = {}  # domain -> origin -> Crawl-delay
        self._latency: dict[str, float] = {}  # domain -> mean fetch seconds

    def configure(self, config: Config) -> None:
        self.politeness_delay = config.politeness.delay
        self.concurrency = config.politeness.domain_concurrency
        self.max_crawl_delay = config.fetch.throttle.max_crawl_delay

    def crawl_delays(self, delays: Iterable[tuple[str, float]]) -> set[str]:
        """Take (origin, Crawl-delay) pairs (0: none); returns the domains
        whose delay changed (their plans are made again)."""
        changed: set[str] = set()
        for origin, delay in delays:
            domain = origin_domain(origin)
            origins = self._crawl.get(domain, {})
            before = max(origins.values(), default=0.0)
            if delay > 0:
                origins[origin] = delay
            else:
                origins.pop(origin, None)
            if origins:
                self._crawl[domain] = origins
            else:
                self._crawl.pop(domain, None)
            if max(origins.values(), default=0.0) != before:
                changed.add(domain)
        return changed

    def crawl_delay(self, domain: str) -> float:
        """The longest Crawl-delay of the domain's origins, capped as workers cap it."""
        origins = self._crawl.get(domain)
        return min(max(origins.values()), self.max_crawl_delay) if origins else 0.0

    def observe(self, domain: str, elapsed: float) -> None:
        """A fetch of `domain` took `elapsed` seconds."""
        if not elapsed > 0 or not math.isfinite(elapsed):
            return
        mean = self._latency.get(domain)
        self._latency[domain] = (
            elapsed if mean is None else mean + LATENCY_WEIGHT * (elapsed - mean)
        )

    def rate(self, domain: str, job: Job) -> float:
        """Fetches per second `job` can make on `domain` (inf: no bound known)."""
        delay = job.delay if job.delay is not None else self.politeness_delay
        delay = max(delay, self.crawl_delay(domain))
        concurrency = job.domain_concurrency or self.concurrency
        latency = self._latency.get(domain)
        paced = 1.0 / delay if delay > 0 else math.inf
        in_flight = concurrency / latency if latency is not None else math.inf
        return min(paced, in_flight)
