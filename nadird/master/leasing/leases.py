"""The lease table: which worker holds which domain, until when.

Every lease carries an epoch from a per-domain counter (a fencing token): a
result naming an older epoch comes from a lease that expired and was re-leased,
so it must not touch the frontier.

A lease also records who holds it (Holder: the worker's name and the
credentials of the registration it was granted under) and every URL it
contained: results are accepted only from that holder, for those URLs. A lease
that ends with URLs still out leaves an EndedLease behind for the late-result
window, so the holder's results in flight are still stored.
"""

from __future__ import annotations

import itertools
import os
from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from nadird.master.row import Row
from nadird.master.state.lease_db import LeaseRecord, LeaseRecords, session_hash

# URLs kept in all ended-lease records together (~100 bytes each); past it the
# oldest records go first. A late result of a forgotten record is refused, its
# URL is crawled again: nothing is lost.
MAX_ENDED_URLS = 100_000


@dataclass(frozen=True, slots=True)
class Holder:
    """Who may report results for a lease."""

    node: str
    session: bytes = b""  # the token of the registration it was granted under
    user: str = ""  # the CURVE key of that registration ("" without CURVE)


@dataclass(slots=True)
class Lease:
    id: str
    epoch: int
    domain: str
    job: str
    holder: Holder
    expires: float
    granted_at: float
    pending: dict[bytes, Row]
    done: bool = False
    wait: float = 0.0
    returned: list[Row] = field(default_factory=list)
    # Every URL leased, by fingerprint (pending only holds those not answered yet).
    urls: dict[bytes, str] = field(default_factory=dict)
    # Their depths: a result must be at its URL's (its links enter one deeper).
    depths: dict[bytes, int] = field(default_factory=dict)
    # An adopted lease: the SHA-256 of the session token it was granted
    # under, which results its holder sent before the restart still carry.
    former: bytes = b""

    def __post_init__(self) -> None:
        if not self.depths:
            self.depths = {fp: row.depth for fp, row in self.pending.items()}

    @property
    def node(self) -> str:
        return self.holder.node


@dataclass(frozen=True, slots=True)
class EndedLease:
    """A lease that expired or was taken back with URLs still out."""

    id: str
    epoch: int
    job: str
    holder: Holder
    urls: dict[bytes, str]  # the URLs it still had out
    ended: float
    depths: dict[bytes, int] = field(default_factory=dict)  # theirs
    former: bytes = b""  # as Lease.former


class EndedLeases:
    """Recently ended leases, oldest first, bounded by MAX_ENDED_URLS."""

    def __init__(self, max_urls: int = MAX_ENDED_URLS) -> None:
        self._records: OrderedDict[str, EndedLease] = OrderedDict()
        self._urls = 0
        self._max_urls = max_urls

    def __len__(self) -> int:
        return len(self._records)

    def add(self, lease: Lease, now: float) -> None:
        if not lease.pending:
            return  # nothing of it can come late
        urls = {fp: row.url for fp, row in lease.pending.items()}
        depths = {fp: row.depth for fp, row in lease.pending.items()}
        record = EndedLease(
            lease.id, lease.epoch, lease.job, lease.holder, urls, now, depths, lease.former
        )
        self._records[lease.id] = record
        self._urls += len(urls)
        while self._urls > self._max_urls:
            self._pop_oldest()

    def get(self, lease_id: str, epoch: int, now: float, window: float) -> EndedLease | None:
        record = self._records.get(lease_id)
        if record is None or record.epoch != epoch or now - record.ended >= window:
            return None
        return record

    def trim(self, now: float, window: float) -> None:
        """Forget the records older than the window."""
        while self._records:
            oldest = next(iter(self._records.values()))
            if now - oldest.ended < window:
                break
            self._pop_oldest()

    def _pop_oldest(self) -> None:
        _, record = self._records.popitem(last=False)
        self._urls -= len(record.urls)


class LeaseTable:
    def __init__(self) -> None:
        self._leases: dict[str, Lease] = {}
        self._epochs: dict[str, int] = {}
        # A per-boot prefix keeps lease ids from two master runs apart.
        self._prefix = os.urandom(3).hex()
        self._ids = itertools.count(1)
        self.ended = EndedLeases()
        # Where live leases are written for a restarted master (None: nowhere).
        self.records: LeaseRecords | None = None
        # Ended leases whose results are not all stored yet keep their record
        # (a restart asks their holder for those results): by fingerprint.
        self._closing: dict[bytes, str] = {}
        self._closing_left: Counter[str] = Counter()

    def __len__(self) -> int:
        return len(self._leases)

    def __iter__(self) -> Iterator[Lease]:
        return iter(list(self._leases.values()))

    def grant(
        self, domain: str, holder: Holder, entries: list[Row], now: float, ttl: float
    ) -> Lease:
        epoch = self._epochs.get(domain, 0) + 1
        self._epochs[domain] = epoch
        lease = Lease(
            id=f"{self._prefix}-{next(self._ids)}",
            epoch=epoch,
            domain=domain,
            job=entries[0].job,
            holder=holder,
            expires=now + ttl,
            granted_at=now,
            pending={e.fp: e for e in entries},
            urls={e.fp: e.url for e in entries},
        )
        self._leases[lease.id] = lease
        self._save(lease)
        return lease

    def adopt(self, lease: Lease) -> None:
        """Take over a lease of the previous run under its id and epoch."""
        self._epochs[lease.domain] = max(self._epochs.get(lease.domain, 0), lease.epoch)
        self._leases[lease.id] = lease
        self._save(lease)

    def _save(self, lease: Lease) -> None:
        if self.records is None:
            return
        holder = lease.holder
        rows = tuple(row.id for row in [*lease.pending.values(), *lease.returned])
        self.records.save(
            LeaseRecord(
                lease.id,
                lease.epoch,
                lease.domain,
                lease.job,
                holder.node,
                holder.user,
                session_hash(holder.session),
                rows,
            )
        )

    def current(self, lease_id: str, epoch: int) -> Lease | None:
        """The lease if it is still live and the epoch matches, else None (fenced)."""
        lease = self._leases.get(lease_id)
        if lease is None or lease.epoch != epoch:
            return None
        return lease

    def renew(self, node: str, lease_ids: list[str], now: float, ttl: float) -> None:
        for lease_id in lease_ids:
            lease = self._leases.get(lease_id)
            if lease is not None and lease.node == node and not lease.done:
                lease.expires = now + ttl

    def expired(self, now: float) -> list[Lease]:
        return [lease for lease in self._leases.values() if lease.expires <= now]

    def of_node(self, node: str) -> list[Lease]:
        return [lease for lease in self._leases.values() if lease.node == node]

    def remove(self, lease: Lease, now: float, unstored: Iterable[bytes] = ()) -> None:
        """End a lease; one with URLs still out is remembered (see EndedLeases).
        Its record stays until the results of `unstored` are durable."""
        if self._leases.pop(lease.id, None) is None:
            return
        self.ended.add(lease, now)
        if self.records is None:
            return
        for fp in unstored:
            self._closing[fp] = lease.id
            self._closing_left[lease.id] += 1
        if not self._closing_left[lease.id]:
            del self._closing_left[lease.id]
            self.records.delete([lease.id])

    def settled(self, lease_ids: Iterable[str]) -> list[str]:
        """Those of `lease_ids` that ended with every result stored: no
        record of theirs waits for a restart to ask for results again."""
        return [i for i in lease_ids if i not in self._leases and i not in self._closing_left]

    def stored(self, fps: Iterable[bytes]) -> None:
        """These results are durable: records of ended leases may go."""
        if not self._closing:
            return
        done = []
        for fp in fps:
            lease_id = self._closing.pop(fp, None)
            if lease_id is not None:
                self._closing_left[lease_id] -= 1
                if not self._closing_left[lease_id]:
                    del self._closing_left[lease_id]
                    done.append(lease_id)
        if done and self.records is not None:
            self.records.delete(done)
