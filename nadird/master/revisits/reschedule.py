"""Due times computed again when a job's revisit policy changes.

A row's due time comes from the policy in force at its last fetch. When a
job's policy changes (a SIGHUP reload, or a start with another config file),
waiting for each URL's next fetch would keep the old schedule for up to an
old interval: `every: 1h` shortened to `15s` would do nothing for an hour.
So the master keeps the fingerprint of the policy each job's rows follow
(revisit_policy_db.py), compares it with the running policy at start and on
every reload, and on a difference computes the due time of each of the
job's rows again, from its stored state (last fetch, last interval, change
statistics) under the new policy, as a fetch would have.

A job has up to millions of rows, so the work is spread over housekeeping
ticks: each tick walks the next CHUNK rows of the schedule by rowid (keyset,
in the order of the rows on disk) and rewrites those of the job, with the
cursor, in the
frontier's redo transaction; a crash resumes from the last commit, and doing
a row twice gives the same answer. Rows queued for a fetch stay queued (the
fetch schedules them under the new policy); rows of a job that revisits no
more lose their due time (NULL, as the due scan parks them) and their plan
group. A row changes its adaptive group with an UPDATE, so the triggers keep
revisit_plan_counts exact, and the in-memory plan counts move with it.

A schedule from before fingerprints were kept (or a new job) is taken as
following the policy it runs with.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from nadird.common.logs import get_logger
from nadird.job.feeds import hub_policy
from nadird.job.spec import Job
from nadird.master.revisits.plan import Key, RevisitPlanner
from nadird.master.state.revisit_db import Entry, RevisitTable
from nadird.revisit.plan import adaptive_rule, rate_class
from nadird.revisit.policy import RevisitPolicy, fingerprint
from nadird.revisit.schedule import UrlState, due_for

log = get_logger()

CHUNK = 2000  # rows of the schedule walked per tick (about 10 ms of work)
START = -(2**63)  # a cursor before every rowid

Clock = Callable[[], float]


def state_of(entry: Entry) -> UrlState:
    return UrlState(entry.last_fetch, entry.interval, entry.stats)


def plan_key(entry: Entry) -> Key | None:
    """The entry's group in its domain's plan (None: not adaptive)."""
    if entry.plan_rule is None:
        return None
    return (entry.job, entry.plan_rule, entry.plan_class)


def regroup(
    planner: RevisitPlanner, policy: RevisitPolicy, entry: Entry, old: Key | None
) -> tuple[float | None, float | None]:
    """Put the entry in its plan group under `policy` (moving its count from
    `old`); returns its group's (allocated, exploratory) intervals."""
    found = adaptive_rule(policy, entry.url)
    entry.plan_rule = entry.plan_class = None
    if found is not None:
        rate = entry.stats.planning_rate()
        entry.plan_rule, entry.plan_class = found[0], None if rate is None else rate_class(rate)
    new = plan_key(entry)
    planner.move(entry.domain, old, new)
    if found is None or new is None:
        return None, None
    return planner.lookup(entry.domain, new, found[1])


def place(planner: RevisitPlanner, policy: RevisitPolicy | None, entry: Entry) -> None:
    """The entry's group and due time under `policy`, from its stored state
    (None: the job revisits no more, the row is parked)."""
    if policy is None:
        planner.move(entry.domain, plan_key(entry), None)
        entry.plan_rule = entry.plan_class = entry.next_due = None
        return
    if entry.hub:
        policy = hub_policy(policy)
    allocated, probe = regroup(planner, policy, entry, plan_key(entry))
    entry.next_due = due_for(policy, entry.url, state_of(entry), allocated, probe=probe)


def policy_of(jobs: Mapping[str, Job], name: str) -> RevisitPolicy | None:
    job = jobs.get(name)
    return None if job is None else job.revisit_policy()


@dataclass
class Pass:
    """A job's rows being rescheduled under the policy of `digest`."""

    job: str
    digest: str
    cursor: int
    started: float
    rows: int = 0


class Rescheduler:
    def __init__(
        self,
        table: RevisitTable,
        planner: RevisitPlanner,
        chunk: int = CHUNK,
        clock: Clock = time.monotonic,
    ) -> None:
        self.table = table
        self.planner = planner
        self.chunk = chunk
        self._clock = clock
        self.passes: dict[str, Pass] = {}  # by job, the oldest first
        self.jobs_done = 0  # jobs rescheduled (this run)
        self.rows_done = 0  # rows given a new due time (this run)

    def check(self, jobs: Mapping[str, Job], pending: Iterable[Entry]) -> list[str]:
        """Compare each job's running policy with the one its rows follow;
        start (or resume) a pass for each that differs. `pending` are the
        fetched rows not written yet: they are placed again at once.
        Returns the jobs whose policy changed."""
        stored = self.table.policies.load()
        revisiting = {name for name, job in jobs.items() if job.revisits}
        changed: list[str] = []
        for name in sorted(stored.keys() | revisiting):
            digest = fingerprint(policy_of(jobs, name))
            known = stored.get(name)
            if known is not None and known[0] == digest:
                if known[1] is not None and name not in self.passes:  # cut short: resume
                    self.passes[name] = Pass(name, digest, known[1], self._clock())
                continue
            if known is None:  # a new job, or a schedule from before fingerprints
                self.table.policies.put(name, digest, None)
                continue
            self.table.policies.put(name, digest, START)
            self.passes.pop(name, None)  # a pass under an older policy starts over
            self.passes[name] = Pass(name, digest, START, self._clock())
            changed.append(name)
        if changed:
            for entry in pending:
                if entry.job in changed:
                    place(self.planner, policy_of(jobs, entry.job), entry)
        return changed

    def tick(self, jobs: Mapping[str, Job], pending: Mapping[bytes, Entry]) -> int:
        """Reschedule the next chunk of the oldest pass; returns the rows given
        a new due time. Rows fetched but not written yet are left alone:
        their `pending` entry (placed by `check` or made under the new
        policy) is written over them, and placing the stored row as well
        would move its plan count twice."""
        if not self.passes:
            return 0
        work = next(iter(self.passes.values()))
        upto, walked = self.table.chunk_end(work.cursor, self.chunk)
        entries: list[tuple[int, Entry]] = []
        if upto is not None:
            policy = policy_of(jobs, work.job)
            for rowid, entry in self.table.waiting_between(work.job, work.cursor, upto):
                if entry.fp not in pending:
                    place(self.planner, policy, entry)
                    entries.append((rowid, entry))
            self.table.set_plan(entries)
            work.cursor = upto
            work.rows += len(entries)
            self.rows_done += len(entries)
        if walked < self.chunk:  # the end of the schedule
            self._finish(work)
        else:
            self.table.policies.put(work.job, work.digest, work.cursor)
        return len(entries)

    def _finish(self, work: Pass) -> None:
        self.table.policies.put(work.job, work.digest, None)
        del self.passes[work.job]
        self.jobs_done += 1
        log.info(
            "revisit_rescheduled",
            job=work.job,
            rows=work.rows,
            seconds=round(self._clock() - work.started, 3),
            parked=not work.digest,  # the job revisits no more
        )
