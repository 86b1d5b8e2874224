"""Per-domain URL queues (on disk) and the schedule of which domain is ready.

Memory holds only one small record per domain: counts, politeness time and
lease flag. URLs live in FrontierDB until their result is durable in the
store. A domain is ready when it has available URLs, is not leased, and its
next allowed time has come. The ready schedule is a heap with lazy
invalidation: a heap entry is valid only while the domain's `scheduled_at`
still matches it.

Each queued URL is in exactly one of three states: available (can be taken),
out (in a lease), or settling (its result is on its way to the store; the row
goes once the store says it is durable).
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from nadird.common.logs import get_logger
from nadird.master.row import Row
from nadird.master.state.frontier_db import FrontierDB

log = get_logger()

Clock = Callable[[], float]


@dataclass(slots=True)
class DomainQueue:
    """One domain's queue as the master keeps it in memory: counts and schedule
    (its URLs are rows in FrontierDB)."""

    name: str
    id: int
    rows: int = 0
    out: int = 0
    settling: int = 0
    next_allowed: float = 0.0  # monotonic
    leased: bool = False
    scheduled_at: float | None = None

    @property
    def available(self) -> int:
        return self.rows - self.out - self.settling


@dataclass(frozen=True, slots=True)
class Caps:
    per_domain: int | None = None
    total: int | None = None


class Frontier:
    def __init__(
        self,
        db: FrontierDB,
        caps: Caps = Caps(),
        clock: Clock = time.monotonic,
        wall: Clock = time.time,
    ) -> None:
        self.db = db
        self.caps = caps
        self._clock = clock
        self._wall = wall
        self._domains: dict[str, DomainQueue] = {}
        self._heap: list[tuple[float, int, str]] = []
        self._tiebreak = itertools.count()
        # fingerprint -> (domain, queue row id) of URLs out in leases and of
        # URLs whose results wait for the store.
        self._out: dict[bytes, tuple[DomainQueue, int]] = {}
        self._settling: dict[bytes, tuple[DomainQueue, int]] = {}
        self._queued = 0
        self.overflowed = 0
        self.seq = db.last_seq()
        self._load()

    # ------------------------------------------------------------ state
    def _load(self) -> None:
        """Rebuild the per-domain records from disk; every row starts available."""
        now, wall = self._clock(), self._wall()
        for count in self.db.domain_counts():
            ds = DomainQueue(count.name, count.id, rows=count.rows)
            ds.next_allowed = now + max(0.0, max(count.next_allowed, count.earliest_retry) - wall)
            self._domains[count.name] = ds
            self._queued += count.rows
            self._schedule(ds)

    @property
    def queued(self) -> int:
        """URLs not yet stored: available, out in leases, or settling."""
        return self._queued

    def domain(self, name: str) -> DomainQueue:
        ds = self._domains.get(name)
        if ds is None:
            ds = self._domains[name] = DomainQueue(name, self.db.domain_id(name))
        return ds

    def get(self, name: str) -> DomainQueue | None:
        return self._domains.get(name)

    def queues(self) -> list[DomainQueue]:
        """Every domain queue in memory."""
        return list(self._domains.values())

    def queue_view(self) -> Collection[DomainQueue]:
        """Every domain queue in memory, without a copy (read, do not keep)."""
        return self._domains.values()

    def _to_wall(self, mono: float) -> float:
        return self._wall() + (mono - self._clock())

    # ---------------------------------------------------------- admission
    def admit(self, rows: Iterable[Row]) -> int:
        """Queue new URLs (already checked against the seen set); the caller commits."""
        accepted: list[tuple[int, Row]] = []
        touched: list[DomainQueue] = []
        for row in rows:
            ds = self.domain(row.domain)
            if self._make_room(ds, row):
                accepted.append((ds.id, row))
                ds.rows += 1
                self._queued += 1
                touched.append(ds)
        if not accepted:
            return 0
        self.seq = self.db.admit(accepted)
        for ds in touched:
            self._schedule(ds)
        return len(accepted)

    def _make_room(self, ds: DomainQueue, row: Row) -> bool:
        caps = self.caps
        if caps.total is not None and self._queued >= caps.total:
            self._overflow(row, "total queue cap")
            return False
        if caps.per_domain is None or ds.rows < caps.per_domain:
            return True
        lowest = self.db.lowest(ds.id)
        evictable = (
            lowest is not None
            and lowest.priority < row.priority
            and lowest.fp not in self._out
            and lowest.fp not in self._settling
        )
        if not evictable or lowest is None:
            self._overflow(row, "domain queue cap")
            return False
        lowest.domain = ds.name
        self.db.delete_one(lowest.id)
        self._overflow(lowest, "evicted by higher priority")
        ds.rows -= 1
        self._queued -= 1
        return True

    def _overflow(self, row: Row, reason: str) -> None:
        self.db.overflow(row, reason)
        self.overflowed += 1
        # Logged at 1, 10, 100, ... so a flood of drops is visible, not noisy.
        if math.log10(self.overflowed).is_integer():
            log.warning(
                "queue_overflow",
                reason=reason,
                domain=row.domain,
                url=row.url,
                total=self.overflowed,
            )

    # ----------------------------------------------------------- schedule
    def _schedule(self, ds: DomainQueue) -> None:
        if ds.leased or ds.available <= 0 or ds.scheduled_at == ds.next_allowed:
            return
        ds.scheduled_at = ds.next_allowed
        heapq.heappush(self._heap, (ds.next_allowed, next(self._tiebreak), ds.name))

    def _valid_top(self) -> DomainQueue | None:
        while self._heap:
            at, _, name = self._heap[0]
            ds = self._domains[name]
            if ds.scheduled_at == at and not ds.leased and ds.available > 0:
                return ds
            heapq.heappop(self._heap)
            if ds.scheduled_at == at:
                ds.scheduled_at = None
        return None

    def next_ready_at(self) -> float | None:
        ds = self._valid_top()
        return ds.next_allowed if ds else None

    def pop_ready(self, now: float) -> DomainQueue | None:
        ds = self._valid_top()
        if ds is None or ds.next_allowed > now:
            return None
        heapq.heappop(self._heap)
        ds.scheduled_at = None
        return ds

    def defer(self, ds: DomainQueue, until: float) -> None:
        """The domain may not be fetched before `until` (monotonic)."""
        ds.next_allowed = max(ds.next_allowed, until)
        if ds.next_allowed - self._clock() > 1.0:
            # Long rests (Retry-After, retries) survive a master restart.
            self.db.set_next_allowed(ds.id, self._to_wall(ds.next_allowed))
        self._schedule(ds)

    # ------------------------------------------------------------ leasing
    def take(self, ds: DomainQueue, limit: int, skip_jobs: Iterable[str] = ()) -> list[Row]:
        """Lease the domain and take up to `limit` URLs of one job, best first.

        Returns [] (and reschedules) when every available URL waits for a retry
        or belongs to a skipped (paused) job.
        """
        rows = self.db.take(ds.id, ds.name, limit + ds.settling, self._wall(), skip_jobs)
        rows = [r for r in rows if r.fp not in self._settling]
        if rows:
            rows = [r for r in rows if r.job == rows[0].job][:limit]
        if not rows:
            earliest = self.db.earliest_retry(ds.id)
            wait = max(1.0, (earliest or 0.0) - self._wall())
            self.defer(ds, self._clock() + wait)
            return []
        ds.leased = True
        ds.out += len(rows)
        for row in rows:
            self._out[row.fp] = (ds, row.id)
        return rows

    def hold(self, name: str, rows: Iterable[Row]) -> None:
        """At a restart: the domain stays leased, these URLs out, as a lease of
        the previous run left them, until it is adopted or released."""
        ds = self.domain(name)
        ds.leased = True
        for row in rows:
            if row.fp not in self._out:
                ds.out += 1
                self._out[row.fp] = (ds, row.id)

    def _unout(self, fp: bytes) -> tuple[DomainQueue, int] | None:
        """Take a URL out of its lease: (its domain, its row id), if it was out."""
        held = self._out.pop(fp, None)
        if held is not None:
            held[0].out -= 1
        return held

    def release(self, domain: str, next_allowed: float, returned: Iterable[Row] = ()) -> None:
        """End the domain's lease; URLs handed back become available again."""
        ds = self.domain(domain)
        for row in returned:
            self._unout(row.fp)
        ds.leased = False
        self.defer(ds, next_allowed)

    def acked(self, fp: bytes) -> None:
        """A leased URL's result arrived; it leaves once the store has it."""
        held = self._unout(fp)
        if held is not None:
            held[0].settling += 1
            self._settling[fp] = held

    def late(self, domain: str, pages: Iterable[tuple[bytes, int]]) -> None:
        """Results outside any live lease, as (fingerprint, row id echoed by
        the worker, 0 if none): hold their URLs back until stored (a URL out
        in a newer lease stays with that lease)."""
        ds = self._domains.get(domain)
        if ds is None:
            return
        wanted = {fp: row for fp, row in pages if fp not in self._out and fp not in self._settling}
        if not wanted:
            return
        # An echoed id counts only if that row still holds that fingerprint
        # (ids of deleted rows are reused); the others are searched for.
        held = self.db.fps_of([row for row in wanted.values() if row])
        found = {fp: row for fp, row in wanted.items() if row and held.get(row) == fp}
        missing = [fp for fp in wanted if fp not in found]
        if missing:
            found.update(self.db.find(ds.id, missing))
        for fp, row_id in found.items():
            ds.settling += 1
            self._settling[fp] = (ds, row_id)

    def unstored(self, fps: Iterable[bytes]) -> list[bytes]:
        """Those of `fps` whose results wait for the store."""
        return [fp for fp in fps if fp in self._settling]

    def durable(self, fps: Iterable[bytes]) -> None:
        """The store confirmed these results: their URLs leave the frontier."""
        settled: list[tuple[DomainQueue, int]] = []
        for fp in fps:
            held = self._settling.pop(fp, None)
            if held is not None:
                held[0].settling -= 1
                settled.append(held)
        if not settled:
            return
        gone = self.db.delete_many([row_id for _, row_id in settled])
        for ds, row_id in settled:
            if row_id in gone:
                ds.rows -= 1
                self._queued -= 1
        for ds in {id(ds): ds for ds, _ in settled}.values():
            self._schedule(ds)

    def retry(self, row: Row, attempts: int, delay: float, error: str) -> None:
        """Keep a URL that failed transiently; it becomes available after `delay`."""
        self._unout(row.fp)
        self.db.schedule_retry(row.id, attempts, self._wall() + delay, error)

    def hand_over(self, row: Row, job: str, error: str) -> None:
        """Give a URL that `row.job` failed to `job` (its on_failure), to be
        fetched again from the first attempt."""
        self._unout(row.fp)
        self.db.hand_over(row.id, job, row.job, error)

    def dead(self, row: Row, error: str, attempts: int) -> None:
        held = self._unout(row.fp)
        self.db.dead_letter(row, error, attempts)
        if held is not None:
            held[0].rows -= 1
            self._queued -= 1

    def drop_job(self, job: str, before_commit: Callable[[list[bytes]], None] | None = None) -> int:
        """Delete a job's queued URLs, except those in a lease or being stored.

        `before_commit` gets the dropped fingerprints, to write what follows
        from their leaving (a revisit row no longer queued) in the same commit.
        """
        dropped: list[bytes] = []
        for row_id, fp, name in self.db.job_rows(job):
            if fp in self._out or fp in self._settling:
                continue
            ds = self._domains.get(name)
            if self.db.delete_one(row_id) and ds is not None:
                ds.rows -= 1
                self._queued -= 1
                dropped.append(fp)
        if before_commit is not None and dropped:
            before_commit(dropped)
        self.db.commit()
        return len(dropped)

    def domain_sizes(self) -> list[tuple[str, int]]:
        return [(name, ds.rows) for name, ds in self._domains.items() if ds.rows]

    def requeue(self, rows: Iterable[Row]) -> int:
        """Queue known URLs again (due revisits), past the caps and the seen
        set: they are few (a scan admits a bounded number) and known."""
        placed = [(self.domain(row.domain), row) for row in rows]
        if not placed:
            return 0
        self.db.requeue([(ds.id, row) for ds, row in placed])
        for ds, _ in placed:
            ds.rows += 1
            self._queued += 1
            self._schedule(ds)
        return len(placed)

    def requeue_dead(self) -> int:
        """Move dead letters marked for retry back into the queue."""
        letters = self.db.dead_letters(requeued=True)
        if not letters:
            return 0
        self.db.requeue_dead(letters)
        for letter in letters:
            ds = self.domain(letter.domain)
            ds.rows += 1
            self._queued += 1
            self._schedule(ds)
        return len(letters)
