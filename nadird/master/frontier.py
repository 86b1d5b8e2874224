"""Per-domain URL queues and the schedule of which domain is ready next.

A domain is ready when it has queued URLs, is not leased, and its next allowed
fetch time has come. The ready schedule is a heap with lazy invalidation: a
domain's heap entry is valid only while its `scheduled_at` still matches, so
rescheduling never needs to search the heap.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(slots=True)
class Entry:
    url: str
    fp: bytes
    depth: int
    job: str


@dataclass(slots=True)
class DomainQueue:
    name: str
    entries: deque[Entry] = field(default_factory=deque)
    next_allowed: float = 0.0
    leased: bool = False
    scheduled_at: float | None = None


class Frontier:
    def __init__(self) -> None:
        self._domains: dict[str, DomainQueue] = {}
        self._heap: list[tuple[float, int, str]] = []
        self._tiebreak = itertools.count()
        self._queued = 0

    @property
    def queued(self) -> int:
        return self._queued

    def domain(self, name: str) -> DomainQueue:
        dq = self._domains.get(name)
        if dq is None:
            dq = self._domains[name] = DomainQueue(name)
        return dq

    def push(self, domain: str, entries: Iterable[Entry], front: bool = False) -> None:
        dq = self.domain(domain)
        before = len(dq.entries)
        if front:
            # Returned or expired URLs go first, in their original order.
            dq.entries.extendleft(reversed(list(entries)))
        else:
            dq.entries.extend(entries)
        self._queued += len(dq.entries) - before
        self._schedule(dq)

    def _schedule(self, dq: DomainQueue) -> None:
        if dq.leased or not dq.entries or dq.scheduled_at == dq.next_allowed:
            return
        dq.scheduled_at = dq.next_allowed
        heapq.heappush(self._heap, (dq.next_allowed, next(self._tiebreak), dq.name))

    def _valid_top(self) -> DomainQueue | None:
        while self._heap:
            at, _, name = self._heap[0]
            dq = self._domains[name]
            if dq.scheduled_at == at and not dq.leased and dq.entries:
                return dq
            heapq.heappop(self._heap)
        return None

    def next_ready_at(self) -> float | None:
        """When the earliest domain becomes ready, or None if none is waiting."""
        dq = self._valid_top()
        return dq.next_allowed if dq else None

    def pop_ready(self, now: float) -> DomainQueue | None:
        dq = self._valid_top()
        if dq is None or dq.next_allowed > now:
            return None
        heapq.heappop(self._heap)
        dq.scheduled_at = None
        return dq

    def take(self, dq: DomainQueue, limit: int) -> list[Entry]:
        """Lease the domain and take up to `limit` URLs of the head URL's job."""
        job = dq.entries[0].job
        taken: list[Entry] = []
        while dq.entries and len(taken) < limit and dq.entries[0].job == job:
            taken.append(dq.entries.popleft())
        self._queued -= len(taken)
        dq.leased = True
        return taken

    def release(self, domain: str, next_allowed: float, returned: Iterable[Entry] = ()) -> None:
        dq = self.domain(domain)
        dq.leased = False
        dq.next_allowed = max(dq.next_allowed, next_allowed)
        self.push(domain, returned, front=True)

    def unready(self, dq: DomainQueue) -> None:
        """Put back a domain taken by pop_ready but not leased (no worker could take it)."""
        self._schedule(dq)
