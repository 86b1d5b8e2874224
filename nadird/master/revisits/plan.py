"""The master's per-domain revisit plans (the allocation of revisit/plan.py).

Per domain it counts the adaptive pages in each (job, rule, rate class)
group, loaded at start from the durable counts (revisit_counts.py, a row per
group) and then moved one page at a time as fetches update estimates
(`move`, O(1)). Every
`master.revisit_allocate_interval` seconds the domains whose counts changed
are planned again (and those whose robots.txt Crawl-delay changed): a
domain's budget is the fetch rate its pace allows (revisit_pace.py: 1 over
the job's delay or the Crawl-delay, bounded by domain_concurrency over the
fetch time; the smallest when several jobs share the domain), less the
fetches outside the plan it took since its last plan (first fetches, fixed
or cron revisits, other jobs' pages); each plan is
a solve over its groups (a few hundred at most), and at most `ROUND_BUDGET`
seconds of them run per tick, the rest in the next ticks. A page's due time
uses its group's interval from the last plan; a group not planned yet (or a
domain without a bound: no delay, no fetch time yet) falls back to the
page's own estimate.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from nadird.common.logs import get_logger
from nadird.job.feeds import hub_rules
from nadird.job.spec import Job
from nadird.revisit.plan import class_interval, plan_groups, probe_interval, schedule_of
from nadird.revisit.policy import Adaptive

log = get_logger()

ROUND_BUDGET = 0.02  # seconds of planning per tick, at most (then the next tick goes on)

# (job, rule, rate class or None): a page's group in its domain.
Key = tuple[str, int, int | None]
Clock = Callable[[], float]
Rate = Callable[[str, Job], float]  # fetches/s a job can make on a domain (revisit_pace.py)


@dataclass
class DomainPlan:
    intervals: dict[Key, float] = field(default_factory=dict)
    mu: float = math.inf  # the allocation's multiplier
    probe: float | None = None  # the exploratory interval (plan.probe_interval)


class RevisitPlanner:
    def __init__(
        self,
        jobs: Callable[[], dict[str, Job]],
        rate: Rate,
        clock: Clock = time.monotonic,
    ) -> None:
        self._jobs = jobs
        self._rate = rate
        self._clock = clock
        self.counts: dict[str, Counter[Key]] = {}
        self.plans: dict[str, DomainPlan] = {}
        self._outside: Counter[str] = Counter()  # fetches outside the plan, since the last
        self._planned_at: dict[str, float] = {}
        self._dirty: set[str] = set()
        self._work: list[str] = []  # this round's domains still to plan
        self._next_round = clock()
        self.rounds = 0
        self.planned = 0  # domain plans made (this run)

    def load(self, rows: Iterable[tuple[str, str, int, int | None, int]]) -> None:
        """Counts from the table's (domain, job, rule, class, pages) rows."""
        counts = self.counts
        for domain, job, rule, klass, pages in rows:  # a row per group: kept lean
            groups = counts.get(domain)
            if groups is None:
                groups = counts[domain] = Counter()
            key = (job, rule, klass)
            groups[key] = groups.get(key, 0) + pages
        self._dirty.update(counts)
        pages = sum(sum(groups.values()) for groups in counts.values())
        log.info("revisit_plans_loaded", domains=len(counts), pages=pages)

    def move(self, domain: str, old: Key | None, new: Key | None) -> None:
        """A page of `domain` left group `old` for `new` (None: not adaptive)."""
        if old == new:
            return
        counts = self.counts.setdefault(domain, Counter())
        if old is not None and counts[old] > 0:
            counts[old] -= 1
            if not counts[old]:
                del counts[old]
        if new is not None:
            counts[new] += 1
        self._dirty.add(domain)

    def replan(self, domains: Iterable[str]) -> None:
        """Plan these domains again in the next round (their pace changed)."""
        self._dirty.update(d for d in domains if self.counts.get(d))

    def outside_fetch(self, domain: str) -> None:
        """A fetch of `domain` that is no adaptive revisit: it takes budget too."""
        self._outside[domain] += 1

    def lookup(
        self, domain: str, key: Key, schedule: Adaptive
    ) -> tuple[float | None, float | None]:
        """(allocated interval, exploratory interval) for a page of group `key`.

        A class the last plan did not have (the page's estimate moved) gets
        the interval the plan's multiplier gives its rate, kept for the next.
        """
        plan = self.plans.get(domain)
        if plan is None or self._own(key):
            return None, None
        interval = plan.intervals.get(key)
        if interval is None and key[2] is not None:
            interval = class_interval(plan.mu, key[2], schedule)
            if interval is not None:
                plan.intervals[key] = interval
        return interval, plan.probe

    def _own(self, key: Key) -> bool:
        """Whether the group is a feeds job's hubs, scheduled on its own estimate."""
        job = self._jobs().get(key[0])
        return job is not None and 0 <= key[1] < hub_rules(job.feeds)

    # ------------------------------------------------------------- planning
    def tick(self, every: float) -> int:
        """Plan the changed domains every `every` seconds, a bounded slice per
        call; returns how many domains this call planned."""
        now = self._clock()
        if not self._work:
            if now < self._next_round:
                return 0
            self._work = sorted(self._dirty | set(self._outside))
            self._dirty.clear()
            self._next_round = now + every
            self.rounds += 1
        done = 0
        stop = now + ROUND_BUDGET
        while self._work and (done == 0 or self._clock() < stop):
            self._plan(self._work.pop(), now)
            done += 1
        self.planned += done
        return done

    def _groups(self, domain: str) -> tuple[list[tuple[Key, Adaptive]], float]:
        """The domain's adaptive groups and the fetch rate its jobs allow."""
        jobs = self._jobs()
        groups: list[tuple[Key, Adaptive]] = []
        rate = math.inf
        for key in self.counts.get(domain) or ():
            if self._own(key):
                continue  # a feeds job's hub: not shared by the plan
            job = jobs.get(key[0])
            policy = None if job is None else job.revisit_policy()
            schedule = None if policy is None else schedule_of(policy, key[1])
            if job is not None and schedule is not None:
                groups.append((key, schedule))
                rate = min(rate, self._rate(domain, job))
        return groups, rate

    def _plan(self, domain: str, now: float) -> None:
        groups, rate = self._groups(domain)
        since = self._planned_at.get(domain)
        self._planned_at[domain] = now
        outside = self._outside.pop(domain, 0)
        outside_rate = outside / (now - since) if since is not None and now > since else 0.0
        budget = rate - outside_rate
        if not groups or not math.isfinite(rate) or not budget > 0:
            self.plans.pop(domain, None)
            return
        counts = self.counts[domain]
        shares = [(key[2], counts[key], schedule) for key, schedule in groups]
        intervals, mu = plan_groups(shares, budget)
        plan = DomainPlan(mu=mu, probe=probe_interval(mu))
        for (key, _), interval in zip(groups, intervals, strict=True):
            if interval is not None and math.isfinite(interval):
                plan.intervals[key] = interval
        self.plans[domain] = plan
