"""Continuous crawling on the master: when known URLs are fetched again.

Two questions, two structures: "is this URL new?" stays the Bloom seen set;
"when is this known URL due?" is the schedule (state/revisit_db.py). A due URL is
put back into the ordinary queue, past the seen set, so a revisit goes
through the same bags, leases, politeness and exactness as a first fetch.

A fetch's schedule row is computed when its result arrives and written when
its queue row leaves (`settle`, called with the frontier's `durable`): both
in one frontier transaction. A 304 is checked and unchanged: no record goes
to the store (it would overwrite the page with an empty one), its row is
settled at once. Time: the scan runs on the master's monotonic ticks, but
what is stored (due, last fetch) is wall-clock, read through SteadyWall (a
clock set back does not stall the schedule); a scan admits at most
MAX_PER_SCAN URLs, so a clock jump (or a long downtime) spreads the backlog
over the following ticks instead of queueing it at once.

Adaptive due times use the domain's plan (revisit_plan.py): each fetch moves
its page between its domain's rate-class groups and takes its group's
interval. An exploratory check (schedule.is_probe) is queued at a higher
priority than the job's, as it only tells something if it runs on time.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from email.utils import parsedate_to_datetime
from typing import Any

from nadird.common.urls import domain_of
from nadird.job.feeds import FeedsSpec, hub_policy
from nadird.job.spec import Job
from nadird.master.frontier.admission import priority
from nadird.master.frontier.queues import Frontier
from nadird.master.revisits.changes import FieldChange, watched_changes
from nadird.master.revisits.etag_health import EtagHealth
from nadird.master.revisits.gauges import CheckRate, DueCount, Lateness
from nadird.master.revisits.learned_hubs import LearnedHubs, hub_kind, recheck_due
from nadird.master.revisits.pace import PlanPace
from nadird.master.revisits.plan import Key, RevisitPlanner
from nadird.master.revisits.reschedule import Rescheduler, plan_key, regroup, state_of
from nadird.master.revisits.steady_wall import SteadyWall
from nadird.master.row import Row
from nadird.master.state.revisit_db import Entry, RevisitTable
from nadird.protocol.messages import PageResult
from nadird.revisit.policy import RevisitPolicy
from nadird.revisit.schedule import UrlState, due_for, due_when_found, is_probe, record_fetch

NOT_MODIFIED = 304
MAX_PER_SCAN = 1000  # URLs queued per scan (about one a second)
MIN_SCAN_GAP = 0.05  # seconds between two due scans, at least
DEAD_REST = 60.0  # seconds before a dead-lettered revisit is due again, at least
MAX_FIELD_CHANGES = 10_000  # durable changes waiting for the alerts tick
PROBE_BOOST = 1000  # queue priority added to an exploratory check

Clock = Callable[[], float]


def modified_epoch(header: str) -> float | None:
    """A Last-Modified header as epoch seconds (None if absent or unreadable)."""
    if not header:
        return None
    try:
        return parsedate_to_datetime(header).timestamp()
    except (TypeError, ValueError):
        return None


class Revisits:
    def __init__(
        self,
        table: RevisitTable,
        frontier: Frontier,
        jobs: dict[str, Job],
        wall: Clock = time.time,
        clock: Clock = time.monotonic,
    ) -> None:
        self.table = table
        self.frontier = frontier
        self.jobs = jobs
        self._wall = SteadyWall(wall, clock)
        # fp -> the row its fetch makes, written when the queue row leaves.
        self._pending: dict[bytes, Entry] = {}
        self.checks = 0  # fetches of known URLs (this run)
        self.changes = 0
        self.not_modified = 0
        self.queued = 0  # due URLs put back into the queue
        self._scan_was_full = False  # the last scan hit MAX_PER_SCAN: a backlog
        # Checks of known URLs, and changes found, by domain (this run; the domain page).
        self.domain_checks: Counter[str] = Counter()
        self.domain_changes: Counter[str] = Counter()
        # Change alerts: job -> the fields its rules watch (set by the alerts
        # service); the changes a fetch found wait in _found until its row is
        # written, then in `field_changes` until the alerts tick takes them.
        self.watch: dict[str, tuple[str, ...]] = {}
        self._found: dict[bytes, list[FieldChange]] = {}
        self.field_changes: list[FieldChange] = []
        self.field_changes_dropped = 0
        self.pace = PlanPace()  # configured by the master (politeness, robots Crawl-delays)
        self.planner = RevisitPlanner(lambda: self.jobs, self.pace.rate, clock)
        self.planner.load(table.plan_counts())
        # Rows scheduled under another policy than the running one get new due times.
        self.rescheduler = Rescheduler(table, self.planner, clock=clock)
        self.policies_changed()
        self.etags = EtagHealth(table.etag_hosts)
        self.late = Lateness()  # the status's gauges (gauges.py)
        self.lateness = self.late.histogram  # registered with the master's metrics
        self.due_count = DueCount(table, self._wall, clock)
        self.rate = CheckRate(clock)
        self.hubs = LearnedHubs()  # feeds jobs' pages that keep finding articles

    @property
    def active(self) -> bool:
        """Whether a job revisits on a schedule: then the crawl is never
        complete (`expire` alone acts only when links are found again)."""
        for job in self.jobs.values():
            policy = job.revisit_policy()
            if policy is not None and (policy.default is not None or policy.rules):
                return True
        return False

    @property
    def scanning(self) -> bool:
        """Whether any job revisits at all (on a schedule or by `expire`)."""
        return any(job.revisits for job in self.jobs.values())

    def _policy_job(self, name: str) -> Job | None:
        job = self.jobs.get(name)
        return job if job is not None and job.revisits else None

    # ------------------------------------------------------------ results
    def on_page(self, page: PageResult, job_name: str, request: bytes | None = None) -> bool:
        """Note a fetched page of `job_name` (asked for with `request`, the
        queue row's); False when the store must not get its record (a 304 of
        a known URL)."""
        job = self._policy_job(job_name)
        policy = None if job is None else job.revisit_policy()
        if policy is None:
            self.planner.outside_fetch(domain_of(page.url))
            return True
        prev = self._pending.get(page.fp) or self.table.get(page.fp)
        self.pace.observe(prev.domain if prev else domain_of(page.url), page.elapsed)
        unchanged = page.status == NOT_MODIFIED and prev is not None
        now = self._wall()
        entry = self._next(page, job_name, prev, unchanged, now)
        self._watch(page, entry, prev, unchanged)
        # A late result has no row: the request of the last fetch stays.
        entry.request = request if request is not None else (prev.request if prev else None)
        late = 0.0
        if prev is not None:
            late = self._observe_revisit(page, prev, entry, now)
        feeds = None if job is None else job.feeds
        if isinstance(feeds, FeedsSpec) and (unchanged or not page.links):
            self.hubs.found(entry, feeds, 0)  # a 304 or a page without links: no article
        self._schedule(policy, prev, entry, late)
        self._pending[page.fp] = entry
        return not unchanged

    def found_articles(self, job_name: str, found: Iterable[tuple[bytes, int]]) -> None:
        """New article links found by fetches of a feeds job's pages (fp,
        count; the pages' rows not yet written): a page that finds enough is
        made a hub, a learned hub that finds none long enough is not one
        any more (learned_hubs.py); either way its due time is computed again."""
        job = self._policy_job(job_name)
        policy = None if job is None else job.revisit_policy()
        feeds = None if job is None else job.feeds
        if policy is None or not isinstance(feeds, FeedsSpec):
            return
        for fp, articles in found:
            entry = self._pending.get(fp)
            if entry is not None and self.hubs.found(entry, feeds, articles):
                self._place(policy, plan_key(entry), entry, 0.0)

    def is_hub(self, fp: bytes) -> bool:
        """Whether a feeds job's page is a hub by what it answered or found
        (its last fetch's row, written or not)."""
        entry = self._pending.get(fp) or self.table.get(fp)
        return entry is not None and entry.hub != 0

    def _observe_revisit(self, page: PageResult, prev: Entry, entry: Entry, now: float) -> float:
        """Lateness (of a revisit the due scan queued; returned) and what its ETag did."""
        late = 0.0
        if prev.queued and prev.next_due is not None:
            late = max(0.0, now - prev.next_due)  # a clock set back: on time
            self.late.observe(late)
        sent_etag = bool(prev.etag) and self.etags.sendable(page.url)
        same = page.signature is not None and page.signature == prev.signature
        self.etags.observe(page.url, sent_etag, page.status, same)
        return late

    def _schedule(
        self, policy: RevisitPolicy, prev: Entry | None, entry: Entry, late: float
    ) -> None:
        """The entry's plan group and due time (adaptive: its group's interval,
        less what this fetch ran late, see schedule.next_due)."""
        self._place(policy, None if prev is None else plan_key(prev), entry, late)
        if prev is None or entry.plan_rule is None:
            self.planner.outside_fetch(entry.domain)
        job = self.jobs.get(entry.job)
        if entry.next_due is None and job is not None and isinstance(job.feeds, FeedsSpec):
            entry.next_due = recheck_due(job, job.feeds, entry)

    def _place(self, policy: RevisitPolicy, old: Key | None, entry: Entry, late: float) -> None:
        if entry.hub:  # a hub whatever its address: the hubs' schedule
            policy = hub_policy(policy)
        allocated, probe = regroup(self.planner, policy, entry, old)
        state = state_of(entry)
        entry.next_due = due_for(policy, entry.url, state, allocated, probe=probe, late=late)

    def _next(
        self, page: PageResult, job: str, prev: Entry | None, unchanged: bool, now: float
    ) -> Entry:
        keep = unchanged or page.signature is None
        signature = (prev.signature if prev else None) if keep else page.signature
        changed = prev is not None and signature != prev.signature
        state = record_fetch(
            None if prev is None else UrlState(prev.last_fetch, prev.interval, prev.stats),
            now,
            changed,
            modified_epoch(page.last_modified),
        )
        if prev is not None:
            self.checks += 1
            self.changes += changed
            self.not_modified += unchanged
            self.domain_checks[prev.domain] += 1
            self.domain_changes[prev.domain] += changed
        return Entry(
            fp=page.fp,
            url=page.url,
            job=job,
            domain=prev.domain if prev else domain_of(page.url),
            depth=page.depth,
            next_due=None,
            queued=False,
            interval=state.last_interval,
            last_fetch=now,
            last_change=now if changed else (prev.last_change if prev else now),
            checks=(prev.checks + 1) if prev else 0,
            changes=(prev.changes + changed) if prev else 0,
            stats=state.stats,
            etag=page.etag or (prev.etag if prev and unchanged else ""),
            last_modified=page.last_modified or (prev.last_modified if prev and unchanged else ""),
            signature=signature,
            hub=hub_kind(page, prev, unchanged),
            hub_idle=prev.hub_idle if prev else 0,
        )

    def _watch(self, page: PageResult, entry: Entry, prev: Entry | None, unchanged: bool) -> None:
        """Keep the watched fields' values in the row; note what changed."""
        before = prev.watched if prev is not None else None
        fields = self.watch.get(entry.job, ())
        if unchanged or not fields:
            entry.watched = before if fields else None
            return
        entry.watched, found = watched_changes(
            page.url, entry.job, fields, before, page.status, page.data
        )
        if found:  # kept with any change of a fetch of the URL not yet settled
            self._found.setdefault(page.fp, []).extend(found)

    def settle(self, fps: Iterable[bytes]) -> None:
        """The URLs' queue rows leave in this transaction: write their rows.
        A field change is handed on once its row is written: a fetch lost in
        a crash is compared again when it is fetched again."""
        entries = [e for fp in fps if (e := self._pending.pop(fp, None)) is not None]
        self.table.put_many(entries)
        if self._found:
            for entry in entries:
                self.hand_on(self._found.pop(entry.fp, []))

    def hand_on(self, found: list[FieldChange]) -> None:
        room = MAX_FIELD_CHANGES - len(self.field_changes)
        self.field_changes.extend(found[:room])
        self.field_changes_dropped += max(0, len(found) - room)

    def take_field_changes(self) -> list[FieldChange]:
        taken, self.field_changes = self.field_changes, []
        return taken

    def dead(self, row: Row) -> None:
        """A revisit whose retries ran out: due again later, not never."""
        entry = self.table.get(row.fp)
        if entry is not None:
            rest = max(entry.interval, DEAD_REST)
            self.table.set_due([(row.fp, self._wall() + rest)])

    # ------------------------------------------------------------ due scan
    def scan(self, limit: int = MAX_PER_SCAN) -> int:
        """Queue the URLs that are due (at most `limit`); returns how many."""
        rows: list[Row] = []
        parked: list[tuple[bytes, float | None]] = []
        for entry in self.table.due(self._wall(), limit):
            job = self._policy_job(entry.job)
            if job is None:  # the job was removed or stopped revisiting
                parked.append((entry.fp, None))
                continue
            rank = priority(job, entry.depth, entry.url, bool(entry.hub), known=True)
            if entry.next_due is not None and is_probe(state_of(entry), entry.next_due):
                rank += PROBE_BOOST
            row = Row(entry.url, entry.fp, entry.depth, entry.job, rank, entry.domain)
            row.request = entry.request
            rows.append(row)
        if parked:
            self.table.set_due(parked)
        if rows:
            self.frontier.requeue(rows)
            self.table.mark_queued([r.fp for r in rows])
            self.queued += len(rows)
        self._scan_was_full = len(rows) + len(parked) >= limit
        return len(rows)

    def next_scan_in(self, idle: float) -> float:
        """Seconds to wait before the next due scan: until the first row falls
        due, within [MIN_SCAN_GAP, idle]. A backlog (the last scan was full)
        waits `idle`, so it is spread over the ticks as a clock jump's is."""
        first = None if self._scan_was_full else self.table.first_due()
        if first is None:
            return idle
        return min(max(first - self._wall(), MIN_SCAN_GAP), idle)

    def unqueue(self, fps: Sequence[bytes]) -> None:
        """Queue rows of these URLs were dropped (their job stopped): not due."""
        self.table.set_due([(fp, None) for fp in fps])

    def found(self, job_name: str, fps: Sequence[bytes]) -> int:
        """Links found again: those fetched at least `expire` ago are due now."""
        job = self._policy_job(job_name)
        policy = None if job is None else job.revisit_policy()
        if policy is None or policy.expire is None or not fps:
            return 0
        now = self._wall()
        due = [
            (fp, now)
            for fp, entry in self.table.get_many(list(set(fps))).items()
            if not entry.queued
            and fp not in self._pending
            and due_when_found(policy, UrlState(entry.last_fetch), now)
        ]
        self.table.set_due(due)
        return len(due)

    def validators(self, job_name: str, fps: Sequence[bytes]) -> list[list[str]]:
        """[ETag, Last-Modified] per URL for a bag ([] when none has any); no
        ETag for a host whose ETags do not work (etag_health.py)."""
        if self._policy_job(job_name) is None:
            return []
        known = self.table.get_many(fps)
        pairs = [self._pair(e) if (e := known.get(fp)) is not None else ["", ""] for fp in fps]
        return pairs if any(a or b for a, b in pairs) else []

    def _pair(self, entry: Entry) -> list[str]:
        if not entry.etag or self.etags.sendable(entry.url):
            return [entry.etag, entry.last_modified]
        self.etags.withheld += 1
        credible = modified_epoch(entry.last_modified) is not None
        return ["", entry.last_modified if credible else ""]

    def crawl_delays(self, delays: Iterable[tuple[str, float]]) -> None:
        """robots.txt Crawl-delays by origin (robots_notes.py): a domain whose
        pace changed is planned again."""
        self.planner.replan(self.pace.crawl_delays(delays))

    def policies_changed(self) -> list[str]:
        """Check the jobs' policies against those their rows follow (at start,
        and after a reload); returns the jobs whose rows get new due times."""
        return self.rescheduler.check(self.jobs, self._pending.values())

    @property
    def rescheduling(self) -> bool:
        return bool(self.rescheduler.passes)

    def tick(self, allocate_every: float) -> int:
        """Reschedule a chunk of rows whose policy changed, queue what is due
        and re-plan the domains whose counts moved."""
        self.rescheduler.tick(self.jobs, self._pending)
        self.planner.tick(allocate_every)
        return self.scan()

    # -------------------------------------------------------------- status
    def checks_per_second(self) -> float:
        return self.rate.per_second(self.checks)

    def status(self) -> dict[str, Any]:
        due, overdue = self.due_count.counts()
        return {
            "revisit_due": due,
            "revisit_overdue": overdue,
            "revisit_checks": self.checks,
            "revisit_changes": self.changes,
            "revisit_not_modified": self.not_modified,
            "revisit_queued": self.queued,
            "revisit_checks_per_second": round(self.checks_per_second(), 3),
            **self.late.summary(),
            "revisit_etag_ignored_hosts": len(self.etags.broken),
            "revisit_etag_withheld": self.etags.withheld,
            "revisit_hubs_learned": self.hubs.learned,
            "revisit_hubs_forgotten": self.hubs.forgotten,
            "revisit_plans": len(self.planner.plans),
            "revisit_rescheduling": len(self.rescheduler.passes),
            "revisit_rescheduled": self.rescheduler.jobs_done,
            "revisit_rescheduled_rows": self.rescheduler.rows_done,
        }
