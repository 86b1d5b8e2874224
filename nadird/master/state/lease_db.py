"""Leases on disk: one row per lease the master granted and has not ended.

A table of frontier.db written through the frontier's redo transaction, so a
lease's row arrives with the grant and leaves with the release that ends it.
The master commits before a Bag leaves (dispatch.py), so after a crash every
lease a worker may still hold has its row here; a restarted master offers
them to their holders (master/leasing/adoption.py) instead of holding every
domain for a lease period.

Columns: id (the lease id), epoch, domain, job; the holder's node name, CURVE
key ("" without) and the SHA-256 of its session token (the token itself is
a secret of that registration: only the holder can show it); rows, the
queue row ids the lease contained, as packed 64-bit integers.

The meta key `lease_rows` is "1" while this table is kept up to date: a file
written by a master with adoption off (or a release without the table) has
leases out that are not listed, so it gets the full hold.
"""

from __future__ import annotations

import hashlib
import sqlite3
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from nadird.common.sql_in import in_chunks
from nadird.master.row import Row
from nadird.master.state.frontier_db import FrontierDB

KEPT = "lease_rows"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS leases (
    id TEXT PRIMARY KEY,
    epoch INTEGER NOT NULL,
    domain TEXT NOT NULL,
    job TEXT NOT NULL,
    node TEXT NOT NULL,
    user TEXT NOT NULL,
    session_hash BLOB NOT NULL,
    rows BLOB NOT NULL
);
"""


def session_hash(session: bytes) -> bytes:
    return hashlib.sha256(session).digest()


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    id: str
    epoch: int
    domain: str
    job: str
    node: str
    user: str
    session_hash: bytes
    rows: tuple[int, ...]


class LeaseRecords:
    def __init__(self, db: FrontierDB) -> None:
        self._frontier = db
        self._db: sqlite3.Connection = db._db
        self._tx = db._tx
        self._db.executescript(_SCHEMA)

    @property
    def kept(self) -> bool:
        """True if every lease out was recorded here by the previous run."""
        return self._frontier.meta(KEPT) == "1"

    def keep(self, on: bool) -> None:
        """From now on this run records its leases (on) or not (off: the
        table is emptied, and a later run gives it the full hold)."""
        if not on:
            self._tx.write("DELETE FROM leases")
        self._frontier.set_meta(KEPT, "1" if on else "0")

    def save(self, record: LeaseRecord) -> None:
        self._tx.write(
            "INSERT OR REPLACE INTO leases VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.id,
                record.epoch,
                record.domain,
                record.job,
                record.node,
                record.user,
                record.session_hash,
                array("q", record.rows).tobytes(),
            ),
        )

    def delete(self, lease_ids: Sequence[str]) -> None:
        for chunk, marks in in_chunks(lease_ids):
            self._tx.write(f"DELETE FROM leases WHERE id IN ({marks})", chunk)

    def all(self) -> Iterator[LeaseRecord]:
        cur = self._db.execute(
            "SELECT id, epoch, domain, job, node, user, session_hash, rows FROM leases"
        )
        for lease_id, epoch, domain, job, node, user, digest, packed in cur:
            ids = array("q")
            ids.frombytes(packed)
            yield LeaseRecord(lease_id, epoch, domain, job, node, user, digest, tuple(ids))

    def rows(self, ids: Iterable[int], domain: str) -> list[Row]:
        """The queue rows with these ids that still exist (not stored yet)."""
        wanted = list(ids)
        found: list[Row] = []
        for chunk, marks in in_chunks(wanted):
            cur = self._db.execute(
                "SELECT url, fp, depth, job, priority, attempts, id, fallback_from, request "
                f"FROM queue WHERE id IN ({marks})",
                chunk,
            )
            found.extend(
                Row(u, fp, d, j, p, domain, a, i, f, rq) for u, fp, d, j, p, a, i, f, rq in cur
            )
        return found
