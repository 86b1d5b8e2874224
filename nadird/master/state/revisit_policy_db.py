"""Which revisit policy each job's schedule rows were computed under.

One row per job that ever revisited: the fingerprint of its policy
(revisit/policy.py `fingerprint`, "" once it revisits no more) and, while
its rows are being rescheduled under that policy (revisit_reschedule.py),
the cursor: the largest rowid of `revisits` done so far (NULL when all are).
Written through the frontier's redo transaction, so a cursor commits with
the rows it covers: a crash mid-way resumes from the last commit.
"""

from __future__ import annotations

import sqlite3

from nadird.master.state.redo import RedoTransaction

PolicyRow = tuple[str, int | None]  # fingerprint, cursor

_SCHEMA = """
CREATE TABLE IF NOT EXISTS revisit_policies (
    job TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    cursor INTEGER
) WITHOUT ROWID;
"""
_PUT = (
    "INSERT INTO revisit_policies (job, fingerprint, cursor) VALUES (?, ?, ?) "
    "ON CONFLICT (job) DO UPDATE SET fingerprint = excluded.fingerprint, cursor = excluded.cursor"
)


class PolicyTable:
    def __init__(self, db: sqlite3.Connection, tx: RedoTransaction) -> None:
        self._db = db
        self._tx = tx
        db.executescript(_SCHEMA)

    def load(self) -> dict[str, PolicyRow]:
        cur = self._db.execute("SELECT job, fingerprint, cursor FROM revisit_policies")
        return {
            str(job): (str(digest), None if cursor is None else int(cursor))
            for job, digest, cursor in cur
        }

    def put(self, job: str, digest: str, cursor: int | None) -> None:
        self._tx.write(_PUT, (job, digest, cursor))
