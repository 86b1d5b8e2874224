"""Adopting the leases of a previous master run after a restart.

Every live lease has a row in frontier.db (frontier/lease_db.py), committed
before its Bag leaves. A restarted master reads them back: each domain with a
recorded lease stays leased, its URLs out, exactly as the crashed run left
it; every other domain is provably not being crawled and is dispatched at
once. A worker that still holds such a bag lists it in its Hello (HeldBag);
the lease is adopted when the claim matches the record:

- same lease id, epoch and domain;
- the same holder: the node name, the CURVE key it registered with ("" without
  CURVE), and the session token of the registration the bag was granted under
  (the record keeps its SHA-256; only that registration was told the token).

An adopted lease keeps its id and epoch and goes on under the worker's new
registration: its URLs still queued stay leased to it, and the Welcome asks
for the results it had sent that are not stored yet (they were lost with the
crashed master). A claim that does not match is refused, counted and logged;
the worker drops that bag. A recorded lease nobody claims keeps the old rule:
its domain is held until the lease could have expired (lease_mark.py), and
for a short claim window after the start at least, then its URLs are leased
again.

Results of such a lease may come before the claim, or without one (a worker
cut off so long it forgot the bag, but not the results queued on its
socket): they are taken at once when they pass the claim's checks (lease id
and epoch, job, node, CURVE key, the session token's hash) and the results'
own (each page a URL of the lease, at its depth; acceptance.py). Their URLs
leave the waiting lease: stored once, not leased again, not asked for again.

With master.adopt_leases off nothing is recorded and every domain is held.
"""

from __future__ import annotations

import hmac
from collections import Counter
from dataclasses import dataclass, field

from nadird.common.logs import get_logger
from nadird.master.frontier.queues import Frontier
from nadird.master.leasing.leases import EndedLease, Holder, Lease, LeaseTable
from nadird.master.leasing.nodes import Node
from nadird.master.row import Row
from nadird.master.state.lease_db import LeaseRecord, LeaseRecords, session_hash
from nadird.protocol.messages import HeldBag, Results

log = get_logger()

# Refusal code -> what the warning says.
REFUSALS = {
    "unknown": "no lease of the previous run by that id is waiting (ended, or never granted)",
    "epoch": "the lease's epoch or domain differs",
    "node": "the lease was granted to another node",
    "key": "the lease was granted to another CURVE key",
    "session": "the session token of the lease's registration does not match",
}


@dataclass(slots=True)
class Waiting:
    """A lease of the previous run, its URLs still out, waiting for its holder."""

    record: LeaseRecord
    rows: list[Row]  # every URL it had out at the start: what results may be for
    # Those no result has come for yet (results_lease takes them out).
    pending: dict[bytes, Row] = field(init=False)

    def __post_init__(self) -> None:
        self.pending = {row.fp: row for row in self.rows}


class Adoption:
    def __init__(
        self,
        records: LeaseRecords,
        frontier: Frontier,
        leases: LeaseTable,
        stats: Counter[str],
    ) -> None:
        self._records = records
        self._frontier = frontier
        self._leases = leases
        self._stats = stats
        self._waiting: dict[str, Waiting] = {}
        self._ended: dict[str, Waiting] = {}  # older records (see start)
        # Their domains: not leased again before the claim window ends, or
        # their unstored URLs would go out before their holder's claim and
        # its results sent again came in (a worker of a newer lease of the
        # domain said hello first), and be fetched again.
        self._ended_domains: set[str] = set()
        self.until = 0.0  # monotonic: when unclaimed leases are given up
        self.refused: Counter[str] = Counter()  # claims refused, by REFUSALS key

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def start(self, enabled: bool, hold_until: float, now: float, window: float) -> bool:
        """Read the previous run's leases; True if every domain must wait
        until `hold_until` (the leases out are not known one by one).

        Recorded leases wait for their holders until `hold_until`, and at
        least `window` seconds: a worker cut off that long has dropped its
        bags (no request runs) but remembers them and can still claim them,
        and no other worker got their domains from this run yet."""
        kept = self._records.kept
        stale = [record.id for record in self._records.all()]
        self._records.keep(enabled)
        if enabled:
            self._leases.records = self._records
        if not enabled or not kept:
            self._records.delete(stale)
            return not enabled or not kept
        newest: dict[str, LeaseRecord] = {}
        for record in self._records.all():
            other = newest.get(record.domain)
            if other is None or other.epoch < record.epoch:
                newest[record.domain] = record
        for record in self._records.all():
            rows = self._records.rows(record.rows, record.domain)
            if not rows:
                self._records.delete([record.id])
            elif newest[record.domain].id == record.id:
                self._frontier.hold(record.domain, rows)
                self._waiting[record.id] = Waiting(record, rows)
            else:
                # An older record of a domain is of a lease that had ended
                # (one lease per domain at a time) with results not stored:
                # its holder may send them again; its domain is not leased
                # again before the window ends (held_until).
                self._ended[record.id] = Waiting(record, rows)
                self._ended_domains.add(record.domain)
        self.until = max(hold_until, now + window)
        if self._waiting:
            log.info("leases_waiting", leases=len(self._waiting), until=round(self.until - now, 3))
        return False

    def held_until(self, domain: str) -> float:
        """Until when (monotonic) `domain` may not be leased again: the end
        of the claim window if a lease of the previous run that had ended
        may still have its results sent again, else 0."""
        return self.until if domain in self._ended_domains else 0.0

    def extend(self, until: float) -> None:
        """Leases still waiting wait at least until `until` (monotonic)."""
        if self._waiting or self._ended:
            self.until = max(self.until, until)

    def claim(self, node: Node, held: list[HeldBag], now: float, ttl: float) -> list[Lease]:
        """Adopt the held bags whose claim matches their record."""
        adopted = []
        for bag in held:
            ended = self._ended.get(bag.lease) if bag.done else None
            if ended is not None and _mismatch(ended.record, bag, node) is None:
                del self._ended[bag.lease]
                adopted.append(self._results_of(ended, bag, node, now))
                continue
            waiting = self._waiting.get(bag.lease)
            why = _mismatch(waiting.record, bag, node) if waiting else "unknown"
            if why == "unknown" and bag.done:
                continue  # a finished bag whose lease ended in full: nothing to take over
            if why is not None or waiting is None:
                self.refused[why or "unknown"] += 1
                self._stats["adoptions_refused"] += 1
                log.warning(
                    "adoption_refused", worker=node.node, lease=bag.lease[:64],
                    reason=REFUSALS[why or "unknown"],
                )  # fmt: skip
                continue
            del self._waiting[bag.lease]
            adopted.append(self._adopt(waiting, bag, node, now, ttl))
        return adopted

    def _adopt(self, waiting: Waiting, bag: HeldBag, node: Node, now: float, ttl: float) -> Lease:
        record = waiting.record
        rows = list(waiting.pending.values())
        returned: list[Row] = []
        if bag.done:  # only the results sent are still due; the rest goes back
            sent = set(bag.sent)
            returned = [row for row in rows if row.fp not in sent]
            rows = [row for row in rows if row.fp in sent]
        lease = Lease(
            id=record.id,
            epoch=record.epoch,
            domain=record.domain,
            job=record.job,
            holder=node.holder(),
            expires=now + ttl,
            granted_at=now,
            pending={row.fp: row for row in rows},
            urls={row.fp: row.url for row in waiting.rows},
            depths={row.fp: row.depth for row in waiting.rows},
            done=bag.done,
            returned=returned,
            former=record.session_hash,  # results sent before the restart
        )
        self._leases.adopt(lease)
        self._stats["leases_adopted"] += 1
        log.info("lease_adopted", lease=lease.id, domain=lease.domain, worker=node.node)
        return lease

    def _results_of(self, ended: Waiting, bag: HeldBag, node: Node, now: float) -> Lease:
        """An ended lease's unstored results, taken as late results of it
        (the domain may be leased to another bag meanwhile). Not a live
        lease: not done, so nothing closes it and its domain stays as is."""
        record = ended.record
        sent = set(bag.sent)
        rows = [row for row in ended.pending.values() if row.fp in sent]
        lease = Lease(
            id=record.id, epoch=record.epoch, domain=record.domain, job=record.job,
            holder=node.holder(), expires=now, granted_at=now,
            pending={row.fp: row for row in rows}, urls={row.fp: row.url for row in rows},
            former=record.session_hash,
        )  # fmt: skip
        self._leases.ended.add(lease, now)
        self._records.delete([record.id])
        return lease

    def lease_named(self, msg: Results, now: float, window: float) -> Lease | EndedLease | None:
        """The lease `msg` names: live (a Lease), ended no longer than
        `window` ago (an EndedLease), the previous run's (results_lease), or
        None. Whether its results are taken is acceptance.refusal's to say.
        Asked twice for one message (the archive asks first), it answers alike."""
        leases = self._leases
        held = leases.current(msg.lease, msg.epoch) or leases.ended.get(
            msg.lease, msg.epoch, now, window
        )
        if held is None:  # the previous run's lease, before (or without) its claim
            adopted = self.results_lease(msg, now)
            held = adopted or leases.ended.get(msg.lease, msg.epoch, now, window)
        return held

    def results_lease(self, msg: Results, now: float) -> Lease | None:
        """The previous run's lease `msg` names, when lease id, epoch and job
        match: the lease its results are checked against and taken by (not a
        live one: nothing renews or closes it). Its holder has the message's
        session token only if it is the one of the lease's registration, and
        its `pending` is the waiting lease's own: a page taken is no longer
        waited for. An ended lease's record (its domain not held) becomes a
        lease whose late results are taken (None is returned)."""
        waiting = self._waiting.get(msg.lease) or self._ended.get(msg.lease)
        if waiting is None or (waiting.record.epoch, waiting.record.job) != (msg.epoch, msg.job):
            return None
        record = waiting.record
        proof = hmac.compare_digest(record.session_hash, session_hash(msg.session))
        rows = waiting.rows
        lease = Lease(
            id=record.id, epoch=record.epoch, domain=record.domain, job=record.job,
            # acceptance.refusal checks node and key, and the token given here.
            holder=Holder(record.node, msg.session if proof else b"", record.user),
            expires=now, granted_at=now, pending=waiting.pending,
            urls={row.fp: row.url for row in rows}, depths={row.fp: row.depth for row in rows},
        )  # fmt: skip
        if msg.lease in self._waiting:
            return lease
        if proof:
            del self._ended[msg.lease]
            self._leases.ended.add(lease, now)
            self._records.delete([record.id])
        return None

    def give_up(self, now: float) -> None:
        """Once the old leases could have expired: their domains are free."""
        if now < self.until:
            return
        self._ended_domains.clear()
        if self._ended:
            self._records.delete(list(self._ended))
            self._ended.clear()
        if not self._waiting:
            return
        for waiting in self._waiting.values():
            self._frontier.release(waiting.record.domain, now, waiting.pending.values())
        self._records.delete(list(self._waiting))
        self._stats["leases_unclaimed"] += len(self._waiting)
        log.info("leases_unclaimed", leases=len(self._waiting))
        self._waiting.clear()


def _mismatch(record: LeaseRecord, bag: HeldBag, node: Node) -> str | None:
    if record.epoch != bag.epoch or record.domain != bag.domain:
        return "epoch"
    if record.node != node.node:
        return "node"
    if record.user != node.user:
        return "key"
    if not hmac.compare_digest(record.session_hash, session_hash(bag.session)):
        return "session"
    return None
