"""The frontier's dead letters: URLs whose retries ran out, with their last error.

A part of FrontierDB (db.py): the same connection and redo transaction,
kept apart because nothing else in the queue's life reads these rows.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nadird.master.state.redo import RedoTransaction

if TYPE_CHECKING:
    from nadird.master.row import Row

__all__ = ["DeadLetterRows", "DeadURL"]


@dataclass(frozen=True, slots=True)
class DeadURL:
    """A URL whose tries ran out (the dead_letters table), as `nadird dead-letters` lists it."""

    url: str
    fp: bytes
    job: str
    domain: str
    depth: int
    priority: int
    error: str
    attempts: int
    first_failed_at: float
    last_failed_at: float
    requeue: bool
    request: bytes | None = None  # as Row.request


class DeadLetterRows:
    _db: sqlite3.Connection
    _tx: RedoTransaction

    def commit(self, retry_now: bool = False) -> bool:
        raise NotImplementedError  # FrontierDB's

    def dead_letter(self, row: Row, error: str, attempts: int) -> None:
        """Move a URL from the queue to the dead letters, keeping its first failure time."""
        now = time.time()
        first = self._db.execute(
            "SELECT first_failed_at FROM queue WHERE id=?", (row.id,)
        ).fetchone()
        self._tx.write("DELETE FROM queue WHERE id=?", (row.id,))
        self._tx.write(
            "INSERT OR REPLACE INTO dead_letters (fp, url, job, domain, depth, priority, error, "
            "attempts, first_failed_at, last_failed_at, requeue, request) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,0,?)",
            (
                row.fp,
                row.url,
                row.job,
                row.domain,
                row.depth,
                row.priority,
                error[:1000],
                attempts,
                first[0] if first and first[0] else now,
                now,
                row.request,
            ),
        )

    def dead_letters(
        self,
        job: str | None = None,
        domain: str | None = None,
        requeued: bool | None = None,
        page: tuple[int, int] | None = None,  # (offset, limit), the newest first
    ) -> list[DeadURL]:
        sql = (
            "SELECT url, fp, job, domain, depth, priority, error, attempts, first_failed_at, "
            "last_failed_at, requeue, request FROM dead_letters WHERE 1=1"
        )
        args: list[object] = []
        if job is not None:
            sql += " AND job=?"
            args.append(job)
        if domain is not None:
            sql += " AND domain=?"
            args.append(domain)
        if requeued is not None:
            sql += " AND requeue=?"
            args.append(int(requeued))
        if page is None:
            sql += " ORDER BY last_failed_at"
        else:
            sql += " ORDER BY last_failed_at DESC, fp LIMIT ? OFFSET ?"
            args += [page[1], page[0]]
        rows = self._db.execute(sql, args).fetchall()
        return [
            DeadURL(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], bool(r[10]), r[11])
            for r in rows
        ]

    def count_dead(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM dead_letters").fetchone()[0])

    def mark_requeue(self, fps: Iterable[bytes]) -> int:
        cur = self._tx.write_many(
            "UPDATE dead_letters SET requeue=1 WHERE fp=?", [(fp,) for fp in fps]
        )
        self.commit()
        return cur.rowcount

    def purge_dead(self, fps: Iterable[bytes]) -> int:
        cur = self._tx.write_many("DELETE FROM dead_letters WHERE fp=?", [(fp,) for fp in fps])
        self.commit()
        return cur.rowcount
