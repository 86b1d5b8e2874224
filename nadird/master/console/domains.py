"""The console's domain table: one page of the master's domain queues,
sorted server-side by queue size, errors or name (see paging.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nadird.master.console.paging import Page, page_number, sorted_page
from nadird.master.frontier.queues import DomainQueue

if TYPE_CHECKING:
    from nadird.master.observe.counts import DomainCounters
    from nadird.master.view.view import MasterView

SORTS = ("queue", "errors", "name")  # labelled by the catalog's sort.* keys


@dataclass(frozen=True)
class DomainRow:
    name: str
    queued: int
    available: int
    in_lease: int
    settling: int
    state: str
    next_allowed_in: float
    results: int
    errors: int
    last_status: int | None
    robots: list[tuple[str, bool]]  # (origin, allows everything) of each robots.txt held


@dataclass(frozen=True)
class DomainTable:
    sort: str
    page: Page
    rows: list[DomainRow]


def sort_key(sort: str, counters: DomainCounters) -> Callable[[DomainQueue], Any]:
    """Ascending keys: the largest queue (or most errors) first, ties by name."""
    errors = counters.errors
    if sort == "errors":
        return lambda ds: (-errors.get(ds.name, 0), -ds.rows, ds.name)
    if sort == "name":
        return lambda ds: ds.name
    return lambda ds: (-ds.rows, ds.name)


def state_of(ds: DomainQueue, now: float) -> str:
    """The queue's state, as a `state.` key of the catalog."""
    if ds.rows == 0:
        return "done"
    if ds.leased:
        return "leased"
    if ds.available == 0:
        return "in_lease" if ds.out else "being_stored"
    return "waiting" if ds.next_allowed > now else "ready"


def _row(
    ds: DomainQueue, counters: DomainCounters, robots: list[tuple[str, bool]], now: float
) -> DomainRow:
    last: Mapping[str, int] = counters.last_status
    return DomainRow(
        ds.name,
        ds.rows,
        ds.available,
        ds.out,
        ds.settling,
        state_of(ds, now),
        max(0.0, ds.next_allowed - now),
        counters.results.get(ds.name, 0),
        counters.errors.get(ds.name, 0),
        last.get(ds.name),
        robots,
    )


def domain_page(master: MasterView, sort: str, query: Mapping[str, str]) -> DomainTable:
    queues = master.domain_queues()
    counters = master.domain_counters()
    page = page_number(query, len(queues))
    shown = sorted_page(queues, sort_key(sort, counters), page)
    now = time.monotonic()
    rows = [
        _row(ds, counters, [(origin, allow) for origin, allow, _ in master.robots_of(ds.name)], now)
        for ds in shown
    ]
    return DomainTable(sort, page, rows)
