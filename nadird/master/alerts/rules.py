"""What each rule type watches: a state snapshot in, the subjects firing out.

A watcher keeps the little history its rule needs (when the stored count
last moved, counter samples over a window); it never reads a clock of its
own, so a test drives it with a made-up `Snapshot.now`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from nadird.config.alerts import RuleConfig
from nadird.master.revisits.changes import FieldChange, as_number, meets


@dataclass(frozen=True)
class WorkerSeen:
    name: str
    silent_for: float  # seconds since its last message
    gone_for: float | None  # seconds since it was marked offline; None: connected


@dataclass(frozen=True)
class Snapshot:
    """What the rules see of the master at one instant."""

    now: float  # monotonic seconds
    queued: int  # URLs queued, in a lease or not
    stored: int  # records written this run
    complete: bool
    dead_letters: int  # URLs dead-lettered since start
    stored_total: int | None = None  # records in the store (across runs), when known
    workers: tuple[WorkerSeen, ...] = ()
    blocked: Mapping[str, int] = field(default_factory=dict)  # domain -> blocks in a row
    # domain -> (pages answered, errors) since start; filled for error_rate rules only.
    domains: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    changes: tuple[FieldChange, ...] = ()  # watched fields changed since the last tick
    # The same, for one job's pages (filled for the jobs rules name): a rule
    # with `job` sees its job's snapshot (JOB_SCOPED types).
    jobs: Mapping[str, Snapshot] = field(default_factory=dict)
    replica_lag: float | None = None  # seconds; None without master.replica
    # Why the master stops: another master took its replica over (None: it did not).
    superseded: str | None = None

    def scoped(self, rule: RuleConfig) -> Snapshot | None:
        """What `rule` sees: its job's part, the whole master, or None (its
        job has no snapshot: the job is gone)."""
        if rule.job is None or rule.type not in JOB_SCOPED:
            return self
        return self.jobs.get(rule.job)


@dataclass(frozen=True)
class Firing:
    """One rule firing for one subject (the crawl, a domain, a worker)."""

    value: float | None  # the number the rule measured (None: nothing to measure)
    threshold: float | None  # the number it is compared with (None: no threshold)
    details: Mapping[str, object] = field(default_factory=dict)  # named in the text


class Watcher:
    def __init__(self, rule: RuleConfig) -> None:
        self.rule = rule

    def check(self, snap: Snapshot) -> dict[str, Firing]:
        raise NotImplementedError

    def prime(self, snap: Snapshot) -> None:
        """Take the master as it is now as the starting point (a rule added
        by a reload): what happened before it was watched is not news."""


class Stall(Watcher):
    """No page stored for `after` while work is queued."""

    def __init__(self, rule: RuleConfig) -> None:
        super().__init__(rule)
        self._stored = -1
        self._moved_at = 0.0

    def check(self, snap: Snapshot) -> dict[str, Firing]:
        if snap.stored != self._stored or snap.queued == 0:
            # Progress, or nothing to do: the stall clock starts again.
            self._stored, self._moved_at = snap.stored, snap.now
            return {}
        still = snap.now - self._moved_at
        if still < self.rule.after_s:
            return {}
        return {"crawl": Firing(round(still, 1), self.rule.after_s, {"queued": snap.queued})}


class Blocked(Watcher):
    """A domain answering 403/429/503 `count` times in a row (default 10)."""

    def check(self, snap: Snapshot) -> dict[str, Firing]:
        need = self.rule.count_or(10)
        only = self.rule.domain
        return {
            domain: Firing(streak, need, {"domain": domain})
            for domain, streak in snap.blocked.items()
            if streak >= need and (only is None or domain == only)
        }


class WorkerGone(Watcher):
    """A worker not heard from for `after` (default: at once once it is
    marked offline). The silence is counted from its last message, so the
    master marking a silent worker offline changes nothing: the alert lasts
    until the worker is heard from again (it re-registers, or a silent one
    speaks), even if it drops out of the master's list of gone workers."""

    def __init__(self, rule: RuleConfig) -> None:
        super().__init__(rule)
        self._last_heard: dict[str, float] = {}  # firing worker -> when last heard (monotonic)

    def check(self, snap: Snapshot) -> dict[str, Firing]:
        after = self.rule.after_s
        out: dict[str, Firing] = {}
        listed = set()
        for worker in snap.workers:
            listed.add(worker.name)
            silent = max(worker.silent_for, worker.gone_for or 0.0)
            # Connected: only a silence as long as `after` counts (after 0
            # would be every worker between two heartbeats).
            hit = silent >= after if worker.gone_for is not None else 0 < after <= silent
            if hit:
                self._last_heard[worker.name] = snap.now - silent
                out[worker.name] = Firing(round(silent, 1), after, {"worker": worker.name})
        for name, heard in list(self._last_heard.items()):
            if name in out:
                continue
            if name in listed:  # listed and not firing: heard from again
                del self._last_heard[name]
                continue
            out[name] = Firing(round(snap.now - heard, 1), after, {"worker": name})
        return out


class _Sampled(Watcher):
    """A watcher comparing counters now with the oldest sample in `window`."""

    def __init__(self, rule: RuleConfig) -> None:
        super().__init__(rule)
        self._samples: deque[tuple[float, Snapshot]] = deque()

    def _oldest(self, snap: Snapshot) -> Snapshot:
        window = self.rule.window_s
        self._samples.append((snap.now, snap))
        while len(self._samples) > 1 and snap.now - self._samples[1][0] >= window:
            self._samples.popleft()
        return self._samples[0][1]


class ErrorRate(_Sampled):
    """errors / pages of a domain over `window` above `threshold` (at least
    `count` pages, default 20, so three failures of three pages do not page anyone)."""

    def check(self, snap: Snapshot) -> dict[str, Firing]:
        before = self._oldest(snap).domains
        need = self.rule.count_or(20)
        out: dict[str, Firing] = {}
        for domain, (pages, errors) in snap.domains.items():
            if self.rule.domain is not None and domain != self.rule.domain:
                continue
            pages0, errors0 = before.get(domain, (0, 0))
            pages, errors = pages - pages0, errors - errors0
            if pages >= need and errors / pages > self.rule.threshold:
                details = {"domain": domain, "pages": pages, "window": self.rule.window_s}
                out[domain] = Firing(round(errors / pages, 3), self.rule.threshold, details)
        return out


class DeadLetters(_Sampled):
    """At least `count` (default 1) URLs dead-lettered within `window`."""

    def check(self, snap: Snapshot) -> dict[str, Firing]:
        grown = snap.dead_letters - self._oldest(snap).dead_letters
        need = self.rule.count_or(1)
        if grown < need:
            return {}
        return {"crawl": Firing(grown, need, {"window": self.rule.window_s})}


class Change(Watcher):
    """A watched field of a page of the job changed as `when` says; one
    alert per page (the subject is its URL) however many fields changed."""

    def __init__(self, rule: RuleConfig) -> None:
        super().__init__(rule)
        self.not_numeric = 0  # numeric conditions met by a value that is no number

    def check(self, snap: Snapshot) -> dict[str, Firing]:
        rule, condition = self.rule, self.rule.condition
        out: dict[str, Firing] = {}
        for change in snap.changes:
            if change.job != rule.job or change.field not in rule.fields or change.url in out:
                continue
            hit = meets(condition, change.old, change.new)
            if hit is None:
                self.not_numeric += 1
            elif hit:
                details = {
                    "url": change.url,
                    "field": change.field,
                    "old": change.old,
                    "new": change.new,
                    "when": condition.kind,
                }
                # `any` compares no number: neither a measure nor a threshold.
                limit = None if condition.kind == "any" else condition.limit
                out[change.url] = Firing(as_number(change.new), limit, details)
        return out


class JobFinished(Watcher):
    """The crawl became complete after work done in this run: pages stored
    or dead-lettered since the master started (or since the last notice).
    A master started with nothing to do, or restarted on a finished crawl,
    has done nothing and says nothing; new seeds crawled to the end are
    announced again."""

    def __init__(self, rule: RuleConfig) -> None:
        super().__init__(rule)
        self._announced = 0  # the work counted when last announced

    @staticmethod
    def _work(snap: Snapshot) -> int:
        return snap.stored + snap.dead_letters

    def prime(self, snap: Snapshot) -> None:
        if snap.complete:
            self._announced = self._work(snap)

    def check(self, snap: Snapshot) -> dict[str, Firing]:
        work = self._work(snap)
        if not snap.complete or work <= self._announced:
            return {}
        self._announced = work
        details = {"stored_this_run": snap.stored, "dead_letters": snap.dead_letters}
        if snap.stored_total is not None:
            details["stored_total"] = snap.stored_total
        return {"crawl": Firing(snap.stored, None, details)}


class ReplicaLag(Watcher):
    """The replica (master.replica) more than `after` behind: what the loss
    of the master's machine would cost now. Resolved when it catches up."""

    def check(self, snap: Snapshot) -> dict[str, Firing]:
        lag, after = snap.replica_lag, self.rule.after_s
        if lag is None or lag <= after:
            return {}
        return {"replica": Firing(round(lag, 1), after, {})}


class ReplicaSuperseded(Watcher):
    """Another master took this master's replica over (a restore elsewhere
    while this one ran): it stops. Said once, by the master that stops."""

    def check(self, snap: Snapshot) -> dict[str, Firing]:
        if snap.superseded is None:
            return {}
        return {"replica": Firing(None, None, {"reason": snap.superseded})}


WATCHERS: dict[str, type[Watcher]] = {
    "stall": Stall,
    "blocked": Blocked,
    "worker_gone": WorkerGone,
    "error_rate": ErrorRate,
    "dead_letters": DeadLetters,
    "job_finished": JobFinished,
    "change": Change,
    "replica_lag": ReplicaLag,
    "replica_superseded": ReplicaSuperseded,
}
# Rules that report a moment, not a state: no resolved notice follows.
EVENTS_ONLY = frozenset({"job_finished", "change", "replica_superseded"})
# Moments with a subject of their own each time (a page's URL): `repeat`
# holds back the same subject for that long after it was sent.
MOMENTS = frozenset({"change"})
# Rule types whose `job` restricts them to that job's pages (through the
# job's snapshot; a `change` rule picks its job's changes itself).
JOB_SCOPED = frozenset({"stall", "blocked", "error_rate", "dead_letters"})
