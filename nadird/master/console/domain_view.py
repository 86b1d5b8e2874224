"""The console's page of one domain: its queue and politeness state, the
robots.txt notes of its hosts, its recent fetches and failures, and how
often its revisited pages change and new pages are found."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nadird.common.urls import host_of
from nadird.master.console.news_view import Latency, domain_latency
from nadird.master.results.recent import RecentError, RecentFetch
from nadird.master.view import status

if TYPE_CHECKING:
    from nadird.master.view.view import MasterView

SHOWN = 50  # recent fetches and failures listed


@dataclass(frozen=True)
class DomainView:
    name: str
    queue: dict[str, Any]  # as GET /api/domains/{domain} answers
    robots: list[tuple[str, bool, float]]  # (origin, allows everything, age in s)
    fetches: list[RecentFetch]  # newest first
    errors: list[RecentError]  # newest first
    checks: int  # revisits of known URLs since start
    changes: int  # of which found the page changed
    new_pages: int  # pages answered since start that were no revisit
    hours: float  # since the master started
    latency: list[Latency]  # discovery latency in each feeds job that timed the domain

    @property
    def change_share(self) -> float | None:
        return None if self.checks == 0 else self.changes / self.checks

    def per_hour(self, count: int) -> float:
        return count / self.hours if self.hours > 0 else 0.0


def domain_view(master: MasterView, name: str) -> DomainView | None:
    """None for a domain this master never queued."""
    queue = status.domain(master, name)
    if queue is None:
        return None
    domain = queue["domain"]
    fetches = [f for f in reversed(master.recent_fetches()) if f.domain == domain]
    errors = [e for e in reversed(master.recent_errors()) if _host_in(host_of(e.url), domain)]
    hosts = sorted({domain, *(host_of(f.url) for f in fetches)})
    robots = [note for host in hosts for note in master.robots_of(host)]
    checks, changes = master.domain_revisits(domain)
    answered = int(queue["results_since_start"])
    hours = max(0.0, time.time() - master.started_at) / 3600
    return DomainView(
        domain, queue, robots, fetches[:SHOWN], errors[:SHOWN], checks, changes,
        max(0, answered - checks), hours, domain_latency(master.status(), domain),
    )  # fmt: skip


def _host_in(host: str, domain: str) -> bool:
    return host == domain or host.endswith("." + domain)
