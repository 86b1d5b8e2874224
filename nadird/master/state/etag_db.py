"""What the master learnt of each host's ETags, kept in frontier.db.

One row per host whose ETags were put to the test (etag_health.py): its
state (counting failures, trusted after a 304, broken) and failures so far.
Written through the frontier's redo transaction, so it commits with the
revisit rows of the same results; a host changes its row at most
BROKEN_AFTER + 1 times, so the table costs next to nothing to write, and it
is read once at start.
"""

from __future__ import annotations

import sqlite3

from nadird.master.state.redo import RedoTransaction

COUNTING, TRUSTED, BROKEN = "counting", "trusted", "broken"
HostRow = tuple[str, str, int]  # host, state, failures

_SCHEMA = """
CREATE TABLE IF NOT EXISTS etag_hosts (
    host TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    failures INTEGER NOT NULL
) WITHOUT ROWID;
"""
_PUT = (
    "INSERT INTO etag_hosts (host, state, failures) VALUES (?, ?, ?) "
    "ON CONFLICT (host) DO UPDATE SET state = excluded.state, failures = excluded.failures"
)


class EtagHostTable:
    def __init__(self, db: sqlite3.Connection, tx: RedoTransaction) -> None:
        self._db = db
        self._tx = tx
        db.executescript(_SCHEMA)

    def load(self) -> list[HostRow]:
        cur = self._db.execute("SELECT host, state, failures FROM etag_hosts")
        return [(str(host), str(state), int(failures)) for host, state, failures in cur]

    def put(self, host: str, state: str, failures: int) -> None:
        self._tx.write(_PUT, (host, state, failures))
