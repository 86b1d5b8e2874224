"""How long dispatch waits after a restart: until leases of the previous run
have expired, and no longer.

Every lease expires at most lease_ttl after it was granted or last renewed.
Before a grant or a renewal is answered, the master makes sure frontier.db
holds a wall-clock time at or after that expiry (`leases_until` in its meta
table). The stored time runs `headroom` seconds ahead, so it is written and
committed at most once per headroom while leases are out, not per message.
A clean stop tells every live worker to drop its bags and stores the expiry
of the leases only silent workers still hold ("0": none).

After a restart, dispatch waits until that stored time plus one heartbeat
interval; after a crash that is at most lease_ttl + headroom + one heartbeat
after the last grant or renewal.
"""

from __future__ import annotations

import time

from nadird.config import MasterConfig
from nadird.master.state.frontier_db import FrontierDB

KEY = "leases_until"


class LeaseMark:
    def __init__(self, db: FrontierDB, lease_ttl: float, headroom: float) -> None:
        self._db = db
        self._ttl = lease_ttl
        self._headroom = headroom
        self._until = 0.0  # the stored wall-clock bound, as written by this run

    def cover(self, now: float) -> None:
        """Before leases granted or renewed at `now` (monotonic) are answered."""
        expires = wall_of(now + self._ttl)
        if expires <= self._until:
            return
        self._write(expires + self._headroom)
        self._db.commit()  # before the Bag or Pong leaves

    def settle(self, expires: float | None, now: float) -> None:
        """At a clean stop: only leases expiring at `expires` may still run."""
        self._write(0.0 if expires is None else wall_of(max(now, expires)))

    def _write(self, until: float) -> None:
        self._until = until
        self._db.set_meta(KEY, repr(until))


def wall_of(when: float) -> float:
    """The wall-clock time of the monotonic time `when`."""
    return time.time() + (when - time.monotonic())


def recovery_hold(db: FrontierDB, master: MasterConfig, queued: bool, now: float) -> float:
    """The monotonic time until which a restarted master leases nothing."""
    if not queued:
        return 0.0
    if master.recovery_grace is not None:
        return now + master.recovery_grace
    stored = db.meta(KEY)
    if stored is None:
        # State from a release that kept no mark: a whole lease period.
        return now + master.lease_ttl
    until = float(stored)
    if until <= 0:
        return 0.0  # a clean stop with no lease out
    # Plus a margin of one heartbeat: a worker checks its fence (and hears
    # the new master's reset) at that pace, and a loaded host lags. Capped:
    # a wall clock set back must not hold dispatch for longer than any
    # lease could have lived.
    longest = master.lease_ttl + headroom_of(master)
    wait = min(until - time.time(), longest) + master.heartbeat_interval
    return now + wait if wait > 0 else 0.0


def headroom_of(master: MasterConfig) -> float:
    """How far ahead the stored bound runs: one housekeeping tick."""
    return min(1.0, master.lease_ttl / 4)
