"""How far the replica is behind, measured from Litestream's own log lines.

Litestream 0.5's metrics give the local database's transaction id, not the
replica's; its `replica sync` debug line gives both, at the start of each
upload: {"msg": "replica sync", "db": "frontier.db", "txid": {"replica":
"…03", "db": "…04"}}. The lag of a database is the age of its oldest change
not on the replica yet: each database position seen is kept with the time it
was first seen, and dropped once the replica reaches it. A database never heard
from since Litestream (re)started or stopped counts as behind since then, so
a replica that cannot be reached, or a dead child, shows a growing lag rather
than the last good value.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class _Db:
    pending: dict[int, float] = field(default_factory=dict)  # db txid -> first seen
    unheard_since: float | None = None  # no `replica sync` line since then

    def oldest(self) -> float | None:
        times = [*self.pending.values()]
        if self.unheard_since is not None:
            times.append(self.unheard_since)
        return min(times, default=None)


class ReplicaLag:
    def __init__(self) -> None:
        self._dbs: dict[str, _Db] = {}

    def unheard(self, names: Iterable[str], now: float) -> None:
        """Litestream (re)started or stopped: nothing is known of the replica from now."""
        for name in names:
            db = self._dbs.setdefault(name, _Db())
            if db.unheard_since is None:
                db.unheard_since = now

    def line(self, event: dict[str, Any], now: float) -> bool:
        """Take one of Litestream's JSON log lines; True if it was a `replica sync`."""
        if event.get("msg") != "replica sync":
            return False
        txid, name = event.get("txid"), event.get("db")
        if not isinstance(txid, dict) or not isinstance(name, str):
            return False
        try:
            replica, local = int(str(txid["replica"]), 16), int(str(txid["db"]), 16)
        except (KeyError, ValueError):
            return False
        db = self._dbs.setdefault(name, _Db())
        db.unheard_since = None
        db.pending.setdefault(local, now)
        for seen in [t for t in db.pending if t <= replica]:
            del db.pending[seen]
        return True

    def seconds(self, now: float) -> float:
        """The worst database's lag: 0 when every change is on the replica."""
        oldest = [t for t in (db.oldest() for db in self._dbs.values()) if t is not None]
        return max(0.0, now - min(oldest)) if oldest else 0.0

    def by_db(self, now: float) -> dict[str, float]:
        return {
            name: round(max(0.0, now - t), 3) if (t := db.oldest()) is not None else 0.0
            for name, db in sorted(self._dbs.items())
        }
