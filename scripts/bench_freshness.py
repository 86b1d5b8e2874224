"""Revisit policies on the living web: freshness bought with the same budget.

Each policy plays the scheduler of one crawler against its own living web
(nadird.testing.living, same seed: the same pages change at the same virtual
times), served over loopback by a real server in a thread, in virtual time
(a ManualClock the client moves from one politeness slot to the next):

- fixed:    every page every N/B seconds (N pages of the domain, B = 1/delay);
- adaptive: what the master does: nadird.revisit's estimator per page
            (ChangeStats, fed by each check: changed or not by a noise-free
            signature of the content, plus Last-Modified when the answer has
            it), pages counted per rate class (plan.py, planning_rate: half a
            change over the quiet time for a page never seen to change) and
            B shared among the classes every --replan seconds; due times from
            schedule.next_due with the class's interval and the domain's
            exploratory interval (--no-probe: without exploratory checks),
            less what the fetch ran late (--no-late-credit: without);
- adaptive-mle: the same with the bare estimate ChangeStats.rate() (0 for a
            page never seen to change), as before planning_rate existed;
- oracle:   allocate.py's allocation from the TRUE rates, computed once.

A domain gets one fetch per politeness slot (every `delay` virtual seconds):
a due exploratory check first, else the page most overdue, if any is due.
Every policy sends the validators it holds (If-None-Match, If-Modified-Since).
The judge (nadird.testing.judge) reads the server's own log after a warm-up;
the analytic references are judge.uniform_freshness and
judge.optimal_freshness per domain.

    python scripts/bench_freshness.py --pages 200 --virtual 259200 --seed 1 \
        --policies fixed,adaptive,adaptive-mle,oracle
"""

from __future__ import annotations

import argparse
import asyncio
import email.utils
import hashlib
import heapq
import json
import math
import platform
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import lxml.html

from nadird.revisit.allocate import allocate
from nadird.revisit.plan import class_interval, plan_groups, probe_interval, rate_class
from nadird.revisit.policy import Adaptive
from nadird.revisit.schedule import UrlState, is_probe, next_due, record_fetch
from nadird.testing import judge, livingpages
from nadird.testing.judge import Report
from nadird.testing.living import EPOCH, LivingWeb, ManualClock
from nadird.testing.resolver import LoopbackResolver
from nadird.testing.web import SyntheticWeb, run_in_thread

POLICIES = ("fixed", "adaptive", "adaptive-mle", "oracle")
GOOD_VALIDATORS = ("both", "etag", "last-modified")
# What an extraction rule would keep of each kind of page: its content, not
# the CSRF token, the ad, the generation time or the session link around it.
CONTENT = "h1, .price, article, .headline, ul.items"


def signature(body: bytes) -> bytes:
    """A hash of the page's extracted content (noise-free, as a change detector needs)."""
    tree = lxml.html.fromstring(body)
    parts = [
        lxml.html.tostring(node, method="text", encoding="unicode")
        for node in tree.cssselect(CONTENT)
    ]
    parts += [str(link.get("href")) for link in tree.cssselect("ul.items a")]
    text = "\0".join(" ".join(part.split()) for part in parts)
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


@dataclass
class Copy:
    """What the crawler holds for one page."""

    signature: bytes | None = None
    etag: str | None = None
    last_modified: str | None = None
    state: UrlState | None = None

    def conditional(self) -> dict[str, str]:
        headers = {}
        if self.etag is not None:
            headers["If-None-Match"] = self.etag
        if self.last_modified is not None:
            headers["If-Modified-Since"] = self.last_modified
        return headers


@dataclass
class Domain:
    """One host's pages, their due times and the policy's plan for them."""

    pages: list[int]
    rates: list[float]  # true rates, in the order of `pages` (the oracle's only)
    budget: float  # fetches per virtual second
    due: list[tuple[float, int]] = field(default_factory=list)  # heap of (due, page)
    probes: list[tuple[float, int]] = field(default_factory=list)  # exploratory checks
    allocated: dict[int, float] = field(default_factory=dict)  # oracle: page -> interval
    by_class: dict[int | None, float | None] = field(default_factory=dict)  # adaptive
    mu: float = math.inf  # the last plan's multiplier
    probe: float | None = None  # the exploratory interval of the last plan

    def __post_init__(self) -> None:
        self.due = [(0.0, page) for page in self.pages]
        heapq.heapify(self.due)


@dataclass(frozen=True)
class Settings:
    pages: int
    seed: int
    delay: float
    virtual: float
    warmup: float
    replan: float
    bounds: tuple[float, float]
    probe: bool = True
    late_credit: bool = True


class Planner:
    """Due times under one policy, and the periodic re-allocation of the adaptive one."""

    def __init__(self, policy: str, settings: Settings, domains: Sequence[Domain]) -> None:
        self.policy = policy
        self.settings = settings
        self.domains = domains
        self.fixed = {d.pages[0]: len(d.pages) / d.budget for d in domains}
        low, high = settings.bounds
        self.adaptive = {
            d.pages[0]: Adaptive(min=low, max=high, initial=len(d.pages) / d.budget)
            for d in domains
        }
        if policy == "oracle":
            for domain in domains:
                plan = allocate(domain.rates, domain.budget, settings.bounds)
                domain.allocated = dict(zip(domain.pages, plan.intervals, strict=True))

    def due(self, domain: Domain, page: int, state: UrlState, late: float) -> float:
        if self.policy == "fixed":
            return state.last_fetch + self.fixed[domain.pages[0]]
        if self.policy == "oracle":
            return state.last_fetch + domain.allocated[page]
        schedule = self.adaptive[domain.pages[0]]
        allocated = self.interval(domain, state, schedule)
        credit = late if self.settings.late_credit and state.last_interval > 0 else 0.0
        due = next_due(schedule, str(page), state, allocated, probe=domain.probe, late=credit)
        assert due is not None
        return due

    def rate(self, state: UrlState | None) -> float | None:
        if state is None:
            return None
        stats = state.stats
        return stats.rate() if self.policy == "adaptive-mle" else stats.planning_rate()

    def interval(self, domain: Domain, state: UrlState, schedule: Adaptive) -> float | None:
        """As the master: the interval of the page's class now, from the last plan
        (or from its μ, for a class the plan did not have)."""
        rate = self.rate(state)
        if rate is None:
            return None
        klass = rate_class(rate)
        if klass not in domain.by_class:
            domain.by_class[klass] = class_interval(domain.mu, klass, schedule)
        return domain.by_class[klass]

    def replan(self, domain: Domain, copies: Sequence[Copy]) -> None:
        """Adaptive: the master's plan, from the pages' counts per rate class."""
        if not self.policy.startswith("adaptive"):
            return
        schedule = self.adaptive[domain.pages[0]]
        klass = [
            None if (r := self.rate(copies[p].state)) is None else rate_class(r)
            for p in domain.pages
        ]
        counts = Counter(klass)
        keys = list(counts)
        intervals, mu = plan_groups([(k, counts[k], schedule) for k in keys], domain.budget)
        domain.by_class = dict(zip(keys, intervals, strict=True))
        domain.mu = mu
        domain.probe = probe_interval(mu) if self.settings.probe else None


@dataclass
class Run:
    policy: str
    living: LivingWeb
    clock: ManualClock
    copies: list[Copy]
    reports: list[Report] = field(default_factory=list)


async def fetch(session: aiohttp.ClientSession, run: Run, page: int) -> None:
    """One check of `page` at the clock's time: conditional GET, then what it tells."""
    copy = run.copies[page]
    url = run.living.url(run.living.pages[page])
    async with session.get(url, headers=copy.conditional()) as response:
        body = await response.read()
        status, headers = response.status, response.headers
    now = run.clock.now()
    changed = False
    if status == 200:
        new = signature(body)
        changed = copy.signature is not None and new != copy.signature
        copy.signature = new
        copy.etag = headers.get("ETag")
        copy.last_modified = headers.get("Last-Modified")
    elif status != 304:
        raise RuntimeError(f"unexpected {status} for {url}")
    if changed:
        run.reports.append(Report(page, now))
    modified = None
    if copy.last_modified is not None:
        modified = email.utils.parsedate_to_datetime(copy.last_modified).timestamp() - EPOCH
    copy.state = record_fetch(copy.state, now, changed, modified)


def next_page(domain: Domain, t: float) -> tuple[float, int] | None:
    """The page a domain fetches in the slot at `t`: a due probe first (as the
    master's queue priority does), else the most overdue page, if any is due."""
    for heap in (domain.probes, domain.due):
        if heap and heap[0][0] <= t:
            return heapq.heappop(heap)
    return None


async def play(run: Run, planner: Planner, port: int) -> None:
    """Every politeness slot: each domain fetches its most overdue page, if any."""
    settings = planner.settings
    connector = aiohttp.TCPConnector(resolver=LoopbackResolver(), limit=64)
    slots = int(settings.virtual / settings.delay)
    next_replan = 0.0
    async with aiohttp.ClientSession(connector=connector) as session:
        for slot in range(slots):
            t = slot * settings.delay
            run.clock.set(t)
            if t >= next_replan:
                for domain in planner.domains:
                    planner.replan(domain, run.copies)
                next_replan = t + settings.replan
            chosen = [(d, nxt) for d in planner.domains if (nxt := next_page(d, t)) is not None]
            await asyncio.gather(*(fetch(session, run, page) for _, (_, page) in chosen))
            for domain, (was_due, page) in chosen:
                state = run.copies[page].state
                assert state is not None
                due = planner.due(domain, page, state, t - was_due)
                heap = domain.probes if is_probe(state, due) else domain.due
                heapq.heappush(heap, (due, page))


def domains_of(living: LivingWeb, delay: float) -> list[Domain]:
    return [
        Domain(
            pages=[p.index for p in living.pages if p.host == host],
            rates=[p.rate for p in living.pages if p.host == host],
            budget=1.0 / delay,
        )
        for host in living.hosts
    ]


def unchanged_revisits(run: Run, settings: Settings) -> dict[str, Any]:
    """304 share and bytes of revisits that found the version they already held."""
    last: dict[int, int] = {}
    good = {p.index for p in run.living.pages if p.validators in GOOD_VALIDATORS}
    tally = {"good": [0, 0, 0], "all": [0, 0, 0]}  # revisits, 304s, bytes
    full = [0, 0]  # 200 answers in the window, their bytes
    for entry in run.living.entries():
        before = last.get(entry.page)
        last[entry.page] = entry.version
        if entry.t < settings.warmup:
            continue
        if entry.status == 200:
            full[0] += 1
            full[1] += entry.bytes
        if before != entry.version:
            continue
        for name in ("good", "all") if entry.page in good else ("all",):
            tally[name][0] += 1
            tally[name][1] += entry.status == 304
            tally[name][2] += entry.bytes
    mean_full = full[1] / max(full[0], 1)
    out: dict[str, Any] = {"mean_full_fetch_bytes": round(mean_full)}
    for name, (count, not_modified, sent) in tally.items():
        out[f"unchanged_{name}"] = count
        out[f"share_304_{name}"] = not_modified / max(count, 1)
        out[f"bytes_ratio_{name}"] = sent / max(count, 1) / mean_full
    return out


def by_tier(run: Run, settings: Settings, truth: judge.Truth) -> dict[str, Any]:
    """Freshness and requests per true rate: where each policy spends its budget."""
    entries = [e for e in run.living.entries() if e.t >= settings.warmup]
    fetches = judge.fetches_from_log(run.living.entries())
    tiers: dict[str, Any] = {}
    for rate in sorted({p.rate for p in run.living.pages}, reverse=True):
        pages = {p.index for p in run.living.pages if p.rate == rate}
        fresh = judge.staleness(truth, fetches, settings.warmup, settings.virtual, pages)
        name = f"1/{round(1 / rate)}" if rate else "0"
        requests = sum(e.page in pages for e in entries)
        tiers[name] = {"pages": len(pages), "requests": requests, "freshness": fresh.freshness}
    return tiers


def content(living: LivingWeb, page: int, version: int) -> bytes:
    """The signature of a page's version as served without noise."""
    served = living.pages[page]
    host_pages = [p for p in living.pages if p.host == served.host]
    return signature(livingpages.render(living.seed, served, version, host_pages, None))


def undetected(run: Run, settings: Settings) -> int:
    """Checks in the window that got content other than the page's previous
    check got, yet reported no change: detection failures (must be 0).

    Another version with the same content is no change (a price that went
    down and back up to the same cents between two checks: at the living
    web's price floor that happens); `missed` counts the changes overwritten
    before any check could see them."""
    reported = {(r.page, r.t) for r in run.reports}
    last: dict[int, int] = {}
    failures = 0
    for entry in run.living.entries():
        before = last.get(entry.page)
        last[entry.page] = entry.version
        new = before is not None and before != entry.version
        if entry.t < settings.warmup or not new or (entry.page, entry.t) in reported:
            continue
        assert before is not None
        failures += content(run.living, entry.page, before) != content(
            run.living, entry.page, entry.version
        )
    return failures


def measure(run: Run, settings: Settings) -> dict[str, Any]:
    truth = run.living.truth(settings.virtual)
    verdict = judge.judge(
        truth, run.living.entries(), settings.warmup, settings.virtual, run.reports
    )
    return {
        "policy": run.policy,
        "freshness": verdict.staleness.freshness,
        "mean_age": verdict.staleness.mean_age,
        "requests": verdict.spending.requests,
        "bytes": verdict.spending.bytes,
        "not_modified": verdict.spending.not_modified,
        "changes": verdict.changes.changes,
        "detected": verdict.changes.detected,
        "missed": verdict.changes.missed,
        "undetected": undetected(run, settings),
        "false": verdict.changes.false,
        **unchanged_revisits(run, settings),
        "tiers": by_tier(run, settings, truth),
    }


def references(living: LivingWeb, settings: Settings) -> dict[str, float]:
    """Expected freshness from the true rates: the budget spent evenly, and best."""
    uniform = best = 0.0
    for domain in domains_of(living, settings.delay):
        count = len(domain.pages)
        uniform += judge.uniform_freshness(domain.rates, domain.budget).freshness * count
        plan = judge.optimal_freshness(domain.rates, domain.budget, settings.bounds)
        best += plan.freshness * count
    return {"uniform": uniform / len(living.pages), "optimal": best / len(living.pages)}


async def one_policy(policy: str, settings: Settings, server: SyntheticWeb) -> dict[str, Any]:
    clock = ManualClock()
    living = LivingWeb(settings.pages, settings.seed, clock).install(server)
    run = Run(policy, living, clock, [Copy() for _ in living.pages])
    planner = Planner(policy, settings, domains_of(living, settings.delay))
    await play(run, planner, server.port)
    return measure(run, settings)


async def run_all(settings: Settings, policies: Sequence[str]) -> list[dict[str, Any]]:
    """The policies side by side, each against its own server (same seed, same truth)."""
    servers = [run_in_thread() for _ in policies]
    webs = [server.__enter__() for server in servers]
    try:
        return list(
            await asyncio.gather(
                *(one_policy(p, settings, web) for p, web in zip(policies, webs, strict=True))
            )
        )
    finally:
        for server in servers:
            server.__exit__(None, None, None)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200, help="pages, 50 per domain")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--delay", type=float, default=72.0, help="politeness delay, virtual s")
    parser.add_argument("--virtual", type=float, default=3 * 86400.0, help="virtual seconds")
    parser.add_argument("--warmup", type=float, default=None, help="default: a third of it")
    parser.add_argument("--replan", type=float, default=3600.0, help="adaptive re-allocation")
    parser.add_argument("--min", type=float, default=60.0, help="shortest interval")
    parser.add_argument("--max", type=float, default=7 * 86400.0, help="longest interval")
    parser.add_argument("--no-probe", action="store_true", help="no exploratory checks")
    parser.add_argument(
        "--no-late-credit", action="store_true", help="next interval from the fetch, not less"
    )
    parser.add_argument(
        "--policies", default="fixed,adaptive,oracle", help=f"among {','.join(POLICIES)}"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    warmup = args.warmup if args.warmup is not None else args.virtual / 3
    settings = Settings(
        args.pages,
        args.seed,
        args.delay,
        args.virtual,
        warmup,
        args.replan,
        (args.min, args.max),
        not args.no_probe,
        not args.no_late_credit,
    )
    policies = [p for p in args.policies.split(",") if p]
    if not set(policies) <= set(POLICIES) or not 0 <= warmup < args.virtual:
        print(f"error: policies among {POLICIES}, 0 <= warmup < virtual", file=sys.stderr)
        return 2
    started = time.monotonic()
    results = asyncio.run(run_all(settings, policies))
    reference = references(LivingWeb(args.pages, args.seed, ManualClock()), settings)
    summary = {
        "settings": {**vars(args), "warmup": warmup},
        "python": platform.python_version(),
        "aiohttp": aiohttp.__version__,
        "wall_seconds": round(time.monotonic() - started, 2),
        "reference": reference,
        "results": results,
    }
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
