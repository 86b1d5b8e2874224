"""A SQLite write transaction that outlives a failed commit.

With the disk full, SQLite answers SQLITE_FULL at COMMIT (or when a statement
has to spill pages) and rolls the WHOLE transaction back: the next COMMIT then
says "cannot commit - no transaction is active". The master's memory
(frontier counts, leases, the Bloom filter) already holds those changes, so
the connection must hold them too. Every write since the last commit is
therefore kept (the redo list) and played again, at once, on a fresh
transaction: with cache_spill off an uncommitted transaction lives in SQLite's
page cache and needs no disk until COMMIT, so the replay works on a full disk.
The connection thus always shows what memory holds, later reads included, and
the COMMIT tried again after the back-off makes all of it durable at once, or
none of it. Replayed statements give the same results (row ids, RETURNING):
they run in the same order on the same committed state.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence
from typing import Any

from nadird.common.errors import StateError
from nadird.master.observe.health import StateHealth

# Primary result codes of a write the file system refused (full, read-only,
# I/O error, cannot open or create a journal file): worth trying again later.
WRITE_FAILURES = frozenset(
    {
        sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_READONLY,
        sqlite3.SQLITE_CANTOPEN,
        sqlite3.SQLITE_PERM,
    }
)
Params = Sequence[Any]


class StateWriteError(StateError):
    """A state file could not be written and its changes not be kept."""


def is_write_failure(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in WRITE_FAILURES


class RedoTransaction:
    def __init__(self, db: sqlite3.Connection, name: str, health: StateHealth | None) -> None:
        self._db = db
        self.name = name
        # None (a command-line tool): a write failure raises StateWriteError.
        self._health = health
        self._redo: list[tuple[str, Params | list[Params], bool]] = []
        # The redo list could not be played again: nothing more may be committed.
        self._lost = False
        self._db.execute("PRAGMA cache_spill=OFF")
        self._db.execute("PRAGMA temp_store=MEMORY")

    @property
    def pending(self) -> int:
        """Statements written since the last commit."""
        return len(self._redo)

    def write(self, sql: str, params: Params = ()) -> sqlite3.Cursor:
        return self._run(sql, params, many=False)

    def write_many(self, sql: str, rows: list[Params]) -> sqlite3.Cursor:
        return self._run(sql, rows, many=True)

    def _run(self, sql: str, params: Params | list[Params], many: bool) -> sqlite3.Cursor:
        self._redo.append((sql, params, many))
        if not self._db.in_transaction:
            self._db.execute("BEGIN")
        try:
            return self._execute(sql, params, many)
        except sqlite3.Error as exc:
            if not is_write_failure(exc):
                # A bad statement (a bug, a lock): it alone failed, as before.
                self._redo.pop()
                if not self._db.in_transaction:
                    self._replay()
                raise
            self._failed(exc)
            return self._replay()

    def _execute(self, sql: str, params: Params | list[Params], many: bool) -> sqlite3.Cursor:
        if many:
            return self._db.executemany(sql, params)
        return self._db.execute(sql, params)

    def commit(self, retry_now: bool = False) -> bool:
        """Make every write since the last commit durable. False if that failed
        (or, unless `retry_now`, its back-off is not over): the writes are
        kept for the next try."""
        if not self._redo:
            if self._db.in_transaction:  # nothing written: end it (frees its read mark)
                self._db.execute("COMMIT")
            return True
        health = self._health
        if self._lost or (health is not None and not (retry_now or health.may_try(self.name))):
            return False
        try:
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            if not is_write_failure(exc):
                raise
            self._failed(exc)
            with contextlib.suppress(StateWriteError):  # health.fatal says so
                self._replay()
            return False
        self._redo.clear()
        if self._health is not None:
            self._health.ok(self.name)
        return True

    def _failed(self, exc: sqlite3.Error) -> None:
        if self._health is None:
            self._rollback()
            self._redo.clear()
            raise StateWriteError(f"{self.name}: cannot write ({exc})") from None
        self._health.failed(self.name, exc)

    def _rollback(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")

    def _replay(self) -> sqlite3.Cursor:
        """Play the redo list again on a fresh transaction; the last
        statement's cursor is returned (its caller reads it)."""
        self._rollback()
        try:
            self._db.execute("BEGIN")
            cursor = self._db.execute("SELECT 1")
            for sql, params, many in self._redo:
                cursor.fetchall()  # finish the previous one (RETURNING rows)
                cursor = self._execute(sql, params, many)
        except sqlite3.Error as exc:
            # Memory is now ahead of the file for good: the master must stop
            # (the file holds the last commit; a restart redoes the rest).
            self._rollback()
            self._lost = True
            reason = f"{self.name}: uncommitted changes could not be kept ({exc})"
            if self._health is not None:
                self._health.give_up(reason)
            raise StateWriteError(reason) from None
        return cursor
