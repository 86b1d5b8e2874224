"""How fresh a revisiting crawler keeps its copy of the living web: pure functions.

Inputs, all in virtual seconds:

* truth: per page, its change times in order (LivingWeb.truth): change k
  (1-based) at times[k-1] makes version k live; version 0 is live from 0.
  It must cover the window judged.
* fetches: (page, t, version) for every 200 or 304 the crawler got, taken from
  the server's own log (`fetches_from_log`): after an answer at t the store
  holds the version live at t, until the page's next fetch.
* reports: (page, t) for every change the crawler says it found.

Freshness of page p at t is 1 when the version stored equals the live one,
else 0; the collection's freshness is its mean over pages, averaged over the
window. Age is 0 when fresh, else the time since the first change the store
has not seen (for a page never fetched: since time 0). Both follow Cho and
Garcia-Molina ("Synchronizing a database to improve freshness", SIGMOD 2000).
A page never fetched is stale. Reference values computed from the true rates:
`nadird.revisit.allocate.freshness` (a page refreshed every I: (1 − e^{−λI})/(λI)),
`uniform_freshness` and `optimal_freshness` (a fetch budget spent evenly, or best).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from nadird.revisit.allocate import allocate, freshness
from nadird.testing.living import LivingEntry

Truth = Mapping[int, Sequence[float]]
# Interval bounds that leave the optimum free: from a millisecond to ~31,700 years.
UNBOUNDED = (1e-3, 1e12)


@dataclass(frozen=True)
class Fetch:
    page: int
    t: float
    version: int  # the version live at t, which the store holds from t on


@dataclass(frozen=True)
class Report:
    page: int
    t: float  # the time of the fetch that found the change (or later)


@dataclass(frozen=True)
class Staleness:
    freshness: float  # time-averaged share of pages whose stored version is live
    mean_age: float  # time-averaged mean age, virtual seconds


@dataclass(frozen=True)
class Spending:
    requests: int  # answers for collection pages in the window
    bytes: int  # body bytes of those answers
    not_modified: int  # of which 304


@dataclass(frozen=True)
class ChangeAccount:
    changes: int  # content changes made in the window
    detected: int  # of which reported (see change_account)
    missed: int  # of which overwritten by a later change in the window, unreported
    missed_unfetched: int  # of the missed: no fetch at all while the version was live
    reports: int  # change reports made in the window
    false: int  # of which with no content change behind them


def fetches_from_log(entries: Iterable[LivingEntry]) -> list[Fetch]:
    """What the store holds after each answer: every 200 and 304, in order."""
    return [Fetch(e.page, e.t, e.version) for e in entries if e.status in (200, 304)]


def _by_page(fetches: Iterable[Fetch]) -> dict[int, list[Fetch]]:
    pages: dict[int, list[Fetch]] = {}
    for fetch in fetches:
        pages.setdefault(fetch.page, []).append(fetch)
    for page_fetches in pages.values():
        page_fetches.sort(key=lambda f: f.t)
    return pages


def staleness(
    truth: Truth,
    fetches: Iterable[Fetch],
    start: float,
    end: float,
    pages: Iterable[int] | None = None,
) -> Staleness:
    """Freshness and mean age over [start, end), over `pages` (default: all of truth)."""
    if not end > start:
        raise ValueError(f"expected a window with end > start, got [{start}, {end})")
    chosen = list(truth) if pages is None else list(pages)
    if not chosen:
        raise ValueError("expected at least one page to judge")
    by_page = _by_page(fetches)
    fresh_total = age_total = 0.0
    for page in chosen:
        fresh, age = _page_staleness(truth[page], by_page.get(page, []), start, end)
        fresh_total += fresh
        age_total += age
    span = (end - start) * len(chosen)
    return Staleness(freshness=fresh_total / span, mean_age=age_total / span)


def _page_staleness(
    times: Sequence[float], fetches: Sequence[Fetch], start: float, end: float
) -> tuple[float, float]:
    """Fresh time and the integral of age over [start, end) for one page."""
    cuts = {start, end}
    cuts.update(c for c in times if start < c < end)
    cuts.update(f.t for f in fetches if start < f.t < end)
    edges = sorted(cuts)
    fetch_times = [f.t for f in fetches]
    fresh = age = 0.0
    for low, high in itertools.pairwise(edges):
        live = bisect.bisect_right(times, low)
        last = bisect.bisect_right(fetch_times, low) - 1
        held = fetches[last].version if last >= 0 else -1
        if held == live:
            fresh += high - low
            continue
        # The first change the store has not seen made version held + 1 live.
        since = times[held] if held >= 0 else 0.0
        age += (high - low) * ((low + high) / 2 - since)
    return fresh, age


def spending(entries: Iterable[LivingEntry], start: float, end: float) -> Spending:
    """Requests, body bytes and 304s the server answered in [start, end)."""
    chosen = [e for e in entries if start <= e.t < end]
    return Spending(
        requests=len(chosen),
        bytes=sum(e.bytes for e in chosen),
        not_modified=sum(1 for e in chosen if e.status == 304),
    )


def change_account(
    truth: Truth, fetches: Iterable[Fetch], reports: Iterable[Report], start: float, end: float
) -> ChangeAccount:
    """Detected, missed and false change reports in [start, end).

    A report names the fetch it came from: the page's latest fetch at or
    before the report's time. It is true when that fetch saw a version other
    than the one the page's previous fetch saw, and it is the first report
    naming that fetch; it then detects the change that made that version
    live. Any other report is false: nothing changed (noise, a rotating
    validator), the fetch was the page's first (a new page is no change), the
    fetch was already reported, or no fetch came before it.

    A change made in the window (change k at times[k-1], start <= it < end)
    is missed when no true report detects it and the next change overwrote it
    before `end`: the crawler can no longer learn of it. A change still live
    at `end` and undetected is neither detected nor missed (it may yet be).
    Several changes between two fetches are one detection and missed others.
    """
    by_page = _by_page(fetches)
    times_of = {page: [f.t for f in page_fetches] for page, page_fetches in by_page.items()}
    detected: set[tuple[int, int]] = set()  # (page, version)
    reported_fetches: set[tuple[int, int]] = set()  # (page, index of the fetch)
    false = in_window = 0
    for report in sorted(reports, key=lambda r: r.t):
        counted = start <= report.t < end
        in_window += counted
        page_fetches = by_page.get(report.page, [])
        index = bisect.bisect_right(times_of.get(report.page, []), report.t) - 1
        true = index >= 1 and (report.page, index) not in reported_fetches
        true = true and page_fetches[index].version != page_fetches[index - 1].version
        if true:
            reported_fetches.add((report.page, index))
            detected.add((report.page, page_fetches[index].version))
        elif counted:
            false += 1
    return _count_changes(truth, by_page, detected, start, end, in_window, false)


def _count_changes(
    truth: Truth,
    by_page: Mapping[int, Sequence[Fetch]],
    detected: set[tuple[int, int]],
    start: float,
    end: float,
    reports: int,
    false: int,
) -> ChangeAccount:
    changes = found = missed = unfetched = 0
    for page, times in truth.items():
        fetch_times = [f.t for f in by_page.get(page, [])]
        for k in range(bisect.bisect_left(times, start) + 1, bisect.bisect_left(times, end) + 1):
            changes += 1
            if (page, k) in detected:
                found += 1
                continue
            overwritten = times[k] if k < len(times) else math.inf
            if overwritten < end:
                missed += 1
                first = bisect.bisect_left(fetch_times, times[k - 1])
                unfetched += first == len(fetch_times) or fetch_times[first] >= overwritten
    return ChangeAccount(changes, found, missed, unfetched, reports, false)


@dataclass(frozen=True)
class Verdict:
    staleness: Staleness
    spending: Spending
    changes: ChangeAccount


def judge(
    truth: Truth,
    entries: Sequence[LivingEntry],
    start: float,
    end: float,
    reports: Iterable[Report] = (),
) -> Verdict:
    """Everything above for one window, from the server's log and the crawler's reports."""
    fetches = fetches_from_log(entries)
    return Verdict(
        staleness=staleness(truth, fetches, start, end),
        spending=spending(entries, start, end),
        changes=change_account(truth, fetches, reports, start, end),
    )


# ------------------------------------------------------------ reference values


@dataclass(frozen=True)
class Reference:
    freshness: float  # mean expected freshness over the pages
    intervals: list[float]  # per page, in seconds


def uniform_freshness(rates: Sequence[float], budget: float) -> Reference:
    """Every page refreshed every len(rates)/budget seconds (budget: fetches per second)."""
    _check_budget(rates, budget)
    intervals = [len(rates) / budget] * len(rates)
    return Reference(_mean_freshness(rates, intervals), intervals)


def optimal_freshness(
    rates: Sequence[float], budget: float, bounds: tuple[float, float] = UNBOUNDED
) -> Reference:
    """The most expected freshness `budget` fetches per second can buy for pages
    changing at `rates`, each interval within `bounds` (Cho & Garcia-Molina,
    "Effective page refresh policies", TODS 2003), as the revisit planner
    computes it (nadird.revisit.allocate, every distinct rate solved exactly).
    With the default bounds, pages that never change or change too fast to
    follow get the longest interval, 1e12 s: in effect, no refresh.
    """
    _check_budget(rates, budget)
    allocation = allocate(rates, budget, bounds, classes_per_decade=None)
    return Reference(_mean_freshness(rates, allocation.intervals), allocation.intervals)


def _mean_freshness(rates: Sequence[float], intervals: Sequence[float]) -> float:
    return sum(map(freshness, rates, intervals)) / len(rates)


def _check_budget(rates: Sequence[float], budget: float) -> None:
    if not rates:
        raise ValueError("expected at least one page")
    if not (budget > 0 and math.isfinite(budget)):
        raise ValueError(f"expected a budget > 0 fetches per second, got {budget}")
