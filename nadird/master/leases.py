"""The lease table: which worker holds which domain, until when.

Every lease carries an epoch from a per-domain counter (a fencing token): a
result naming an older epoch comes from a lease that expired and was re-leased,
so it must not touch the frontier.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from nadird.master.frontier_db import Row


@dataclass(slots=True)
class Lease:
    id: str
    epoch: int
    domain: str
    job: str
    node: str
    expires: float
    granted_at: float
    pending: dict[bytes, Row]
    done: bool = False
    wait: float = 0.0
    returned: list[Row] = field(default_factory=list)


class LeaseTable:
    def __init__(self) -> None:
        self._leases: dict[str, Lease] = {}
        self._epochs: dict[str, int] = {}
        # A per-boot prefix keeps lease ids from two master runs apart.
        self._prefix = os.urandom(3).hex()
        self._ids = itertools.count(1)

    def __len__(self) -> int:
        return len(self._leases)

    def __iter__(self) -> Iterator[Lease]:
        return iter(list(self._leases.values()))

    def grant(self, domain: str, node: str, entries: list[Row], now: float, ttl: float) -> Lease:
        epoch = self._epochs.get(domain, 0) + 1
        self._epochs[domain] = epoch
        lease = Lease(
            id=f"{self._prefix}-{next(self._ids)}",
            epoch=epoch,
            domain=domain,
            job=entries[0].job,
            node=node,
            expires=now + ttl,
            granted_at=now,
            pending={e.fp: e for e in entries},
        )
        self._leases[lease.id] = lease
        return lease

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

    def remove(self, lease: Lease) -> None:
        self._leases.pop(lease.id, None)
