"""The embedded default store: one SQLite file next to the master.

The connection lives on a thread of its own (`DbThread`), so the event loop
never waits on disk. Everything CPU-heavy about a record (zlib, JSON) also
happens on that thread.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import AsyncIterator, Sequence
from typing import Any

from nadird.common.errors import StoreError
from nadird.store.base import PageRecord
from nadird.store.db_thread import DbThread
from nadird.store.history import SQLITE_SCHEMA as HISTORY_SCHEMA
from nadird.store.history import (
    Pairing,
    Version,
    append_sqlite,
    history_columns,
    recent_sqlite,
)
from nadird.store.items import KeyedItem
from nadird.store.retention import Keep, TrimStep
from nadird.store.sqlite import page_history, pages
from nadird.store.sqlite.changes import ChangeKey, ChangesChunk, changes_chunk
from nadird.store.sqlite.items import item_of, items_chunk, upsert_items_sync
from nadird.store.sqlite.schema import NAMES, from_row, migrate, to_row
from nadird.store.sqlite.trim import trim_step
from nadird.store.stored import CheckpointOf, PageUpdate, StoredPage, UpdateOutcome

# Rows fetched per executor round trip by iter_records: big enough to amortise
# the thread hop, small enough that a huge store never sits in memory at once.
CHUNK_ROWS = 500
# Versions per round trip of iter_changes: a chunk is a few milliseconds of
# the store's thread, so a write waiting behind it is not held up for long.
CHANGE_ROWS = 1000
# Fingerprints per `IN (...)` query: under SQLite's smallest variable limit (999).
_IN_CHUNK = 900

_UPSERT = (
    f"INSERT INTO pages ({', '.join(NAMES)}) VALUES ({', '.join('?' * len(NAMES))}) "
    "ON CONFLICT(fp) DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in NAMES if c != "fp")
)

# Keyset pagination on rowid: each chunk is a fresh, short query, so no read
# cursor stays open across awaits (a write between chunks is never blocked and
# never invalidates the iteration). An upsert keeps the row's rowid, and the
# job index carries rowid, so both forms walk an index in order.
_SELECT_ALL = f"SELECT rowid, {', '.join(NAMES)} FROM pages WHERE rowid > ? ORDER BY rowid LIMIT ?"
_SELECT_JOB = (
    f"SELECT rowid, {', '.join(NAMES)} FROM pages "
    "WHERE job = ? AND rowid > ? ORDER BY rowid LIMIT ?"
)
# Since a time: keyset pagination on (fetched_at, rowid), through the
# fetched_at index (which carries rowid); `+job` keeps SQLite from the job
# index, which would read the job's every row to sort them.
SELECT_SINCE = (
    f"SELECT fetched_at, rowid, {', '.join(NAMES)} FROM pages "
    "WHERE (fetched_at, rowid) > (?, ?){job} ORDER BY fetched_at, rowid LIMIT ?"
)
SinceKey = tuple[float, int]

# records_of: every column but the body (NULL in its place), by fingerprint.
_SELECT_FPS = (
    f"SELECT {', '.join('NULL' if n == 'body' else n for n in NAMES)} FROM pages WHERE fp IN "
)
# SQLite's default limit of variables in one statement is 999 (older builds).
FPS_PER_QUERY = 500


class SqliteStore:
    """Store backed by one SQLite database file (created on `open`)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._db = DbThread(path, "store")
        self.pages_added = 0  # changed on the store's thread only, after a commit

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r})"

    # Each write goes straight to the file: nothing spooled, never backpressure.
    spool_records = 0
    backpressure = False

    async def open(self) -> None:
        await self._db.open(self._connect)

    async def write(self, records: Sequence[PageRecord]) -> None:
        if not records:
            return
        await self._db.run(self._write_sync, list(records))

    async def upsert_items(self, records: Sequence[PageRecord]) -> int:
        """Upsert the keyed items of `records` (store/items.py) in a
        transaction of their own; `write` does it in the pages' transaction."""
        return await self._db.run(self._upsert_items_sync, list(records))

    async def iter_items(self, job: str | None = None) -> AsyncIterator[KeyedItem]:
        after = 0
        while True:
            items, after = await self._db.run(self._items_chunk_sync, job, after)
            for item in items:
                yield item
            if len(items) < CHUNK_ROWS:
                return

    async def count(self, job: str | None = None) -> int:
        return await self._db.run(self._count_sync, job)

    async def iter_records(
        self, job: str | None = None, since: float | None = None
    ) -> AsyncIterator[PageRecord]:
        if since is not None:
            async for record in self._iter_since(job, since):
                yield record
            return
        after = 0
        while True:
            records, last = await self._db.run(self._chunk_sync, job, after)
            for record in records:
                yield record
            if len(records) < CHUNK_ROWS:
                return
            after = last

    async def _iter_since(self, job: str | None, since: float) -> AsyncIterator[PageRecord]:
        """The records fetched at or after `since`, oldest first."""
        after: SinceKey = (since, -1)  # (since, -1) < (fetched_at, rowid): fetched_at >= since
        while True:
            records, after = await self._db.run(self._since_chunk_sync, job, after)
            for record in records:
                yield record
            if len(records) < CHUNK_ROWS:
                return

    async def records_of(self, fps: Sequence[bytes]) -> list[PageRecord]:
        return await self._db.run(self._records_of_sync, list(fps))

    async def close(self) -> None:
        await self._db.close()

    # Re-extraction (store/stored.py, sqlite/pages.py).

    async def read_pages(
        self, job: str, after: str | None, since: float | None, limit: int
    ) -> list[StoredPage]:
        return await self._db.run(self._read_pages_sync, job, after, since, limit)

    async def update_page_data(
        self, updates: Sequence[PageUpdate], checkpoint: CheckpointOf | None = None
    ) -> UpdateOutcome:
        return await self._db.run(self._update_sync, list(updates), checkpoint)

    async def load_checkpoint(self, name: str) -> dict[str, Any] | None:
        return await self._db.run(self._checkpoint_sync, name)

    async def trim_history(self, keep: Keep, after: str | None, limit: int) -> TrimStep:
        """One step of history retention (store/retention.py, sqlite/trim.py)."""
        return await self._db.run(lambda: trim_step(self._db.conn(), self.path, keep, after, limit))

    # Everything below runs on the store's thread only.

    def _connect(self) -> sqlite3.Connection:
        try:
            return _open_db(self.path)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{self.path}: cannot open SQLite store: {exc}") from exc

    def _write_sync(self, records: list[PageRecord]) -> None:
        rows = [to_row(r) for r in records]
        conn = self._db.conn()
        try:
            # IMMEDIATE takes the write lock up front, so a second process on
            # the same file fails here rather than halfway through the batch.
            conn.execute("BEGIN IMMEDIATE")
            new = _new_pages(conn, {r.fp for r in records})
            conn.executemany(_UPSERT, rows)
            append_sqlite(conn, records)  # the pages' versions, in the same transaction
            upsert_items_sync(conn, records)  # and their keyed items
            conn.execute("COMMIT")
            self.pages_added += new
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise StoreError(f"{self.path}: write of {len(rows)} records failed: {exc}") from exc

    def _items_chunk_sync(self, job: str | None, after: int) -> tuple[list[KeyedItem], int]:
        return items_chunk(self._db.conn(), job, after, CHUNK_ROWS)

    def _upsert_items_sync(self, records: list[PageRecord]) -> int:
        conn = self._db.conn()
        try:
            conn.execute("BEGIN IMMEDIATE")
            count = upsert_items_sync(conn, records)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise StoreError(f"{self.path}: upsert of keyed items failed: {exc}") from exc
        return count

    async def iter_changes(
        self, job: str | None = None, since: float | None = None, chunk: int = CHANGE_ROWS
    ) -> AsyncIterator[dict[str, Any]]:
        """The field changes of revisited pages (history.diffs), by job, URL
        and time, read `chunk` versions at a time (sqlite/changes.py)."""
        pairing = Pairing(since)

        def read(after: ChangeKey | None) -> asyncio.Future[ChangesChunk]:
            return asyncio.ensure_future(
                self._db.run(self._changes_sync, pairing, job, after, chunk)
            )

        # The thread reads the next chunk while this one is written out (a
        # chunk ahead at most): on a busy machine each hand-over to the
        # thread waits to be scheduled, and the export would wait each time.
        pending = read(None)
        try:
            while True:
                found, after, count = await pending
                if count == chunk:
                    pending = read(after)
                for change in found:
                    yield change
                if count < chunk:
                    return
        finally:
            _discard(pending)

    async def stored_page(self, fp: bytes) -> PageRecord | None:
        """A page's record with its body (the console's URL page)."""
        return await self._db.run(lambda: page_history.page_of(self._db.conn(), self.path, fp))

    async def page_versions(
        self, job: str, url: str, offset: int, limit: int
    ) -> tuple[int, list[Version]]:
        """A page's versions, newest first (sqlite/page_history.py)."""
        conn = self._db.conn
        return await self._db.run(
            lambda: page_history.versions_page(conn(), self.path, job, url, offset, limit)
        )

    async def keyed_item(self, job: str, key: str) -> KeyedItem | None:
        """One keyed item (the console's item page)."""
        return await self._db.run(lambda: item_of(self._db.conn(), job, key))

    async def recent_changes(self, limit: int) -> list[dict[str, Any]]:
        """The latest changes of revisited pages, newest first (history.recent_sqlite)."""
        return await self._db.run(lambda: recent_sqlite(self._db.conn(), limit))

    def _changes_sync(
        self, pairing: Pairing, job: str | None, after: ChangeKey | None, rows: int
    ) -> ChangesChunk:
        return changes_chunk(self._db.conn(), pairing, job, after, rows)

    def _read_pages_sync(
        self, job: str, after: str | None, since: float | None, limit: int
    ) -> list[StoredPage]:
        return pages.read_chunk(self._db.conn(), job, after, since, limit)

    def _update_sync(
        self, updates: list[PageUpdate], checkpoint: CheckpointOf | None
    ) -> UpdateOutcome:
        return pages.update_data(self._db.conn(), self.path, updates, checkpoint)

    def _checkpoint_sync(self, name: str) -> dict[str, Any] | None:
        return pages.load_checkpoint(self._db.conn(), name)

    def _count_sync(self, job: str | None) -> int:
        conn = self._db.conn()
        if job is None:
            row = conn.execute("SELECT count(*) FROM pages").fetchone()
        else:
            row = conn.execute("SELECT count(*) FROM pages WHERE job = ?", (job,)).fetchone()
        return int(row[0])

    def _records_of_sync(self, fps: list[bytes]) -> list[PageRecord]:
        conn, found = self._db.conn(), list[PageRecord]()
        for start in range(0, len(fps), FPS_PER_QUERY):
            part = fps[start : start + FPS_PER_QUERY]
            marks = f"({', '.join('?' * len(part))})"
            found.extend(from_row(row) for row in conn.execute(_SELECT_FPS + marks, part))
        return found

    def _chunk_sync(self, job: str | None, after: int) -> tuple[list[PageRecord], int]:
        conn = self._db.conn()
        if job is None:
            rows = conn.execute(_SELECT_ALL, (after, CHUNK_ROWS)).fetchall()
        else:
            rows = conn.execute(_SELECT_JOB, (job, after, CHUNK_ROWS)).fetchall()
        last = int(rows[-1][0]) if rows else after
        return [from_row(row[1:]) for row in rows], last

    def _since_chunk_sync(
        self, job: str | None, after: SinceKey
    ) -> tuple[list[PageRecord], SinceKey]:
        sql = SELECT_SINCE.format(job="" if job is None else " AND +job = ?")
        args = (*after, *([] if job is None else [job]), CHUNK_ROWS)
        rows = self._db.conn().execute(sql, args).fetchall()
        last = (float(rows[-1][0]), int(rows[-1][1])) if rows else after
        return [from_row(row[2:]) for row in rows], last


def _discard(pending: asyncio.Future[Any]) -> None:
    """A read ahead nobody will use: cancelled, or its error taken (so that
    asyncio does not log it as never retrieved)."""
    if not pending.done():
        pending.cancel()
    elif not pending.cancelled():
        pending.exception()


def _open_db(path: str) -> sqlite3.Connection:
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    # isolation_level=None: no implicit transactions; write() opens its own,
    # so "one call = one transaction" is visible in the code.
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        _prepare(conn, path)
    except BaseException:
        conn.close()
        raise
    return conn


def _prepare(conn: sqlite3.Connection, path: str) -> None:
    """Set durability pragmas and create or check the schema."""
    # WAL lets readers (count, export) run alongside the writer. In WAL mode
    # synchronous=NORMAL still survives a crash of this process: a commit is
    # in the WAL file, which the OS holds. Only a power loss or kernel crash
    # can drop the last few commits, and even that never corrupts the file.
    # (This is the first statement that reads the file, so a file that is not
    # a database fails here with sqlite3.DatabaseError.)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    migrate(conn, path)
    conn.executescript(HISTORY_SCHEMA)
    history_columns(conn)


def _new_pages(conn: sqlite3.Connection, fps: set[bytes]) -> int:
    """How many of these fingerprints the pages table does not hold yet (in
    the write's transaction: nothing can add one in between)."""
    held = 0
    listed = list(fps)
    for start in range(0, len(listed), _IN_CHUNK):
        chunk = listed[start : start + _IN_CHUNK]
        marks = ", ".join("?" * len(chunk))
        row = conn.execute(f"SELECT count(*) FROM pages WHERE fp IN ({marks})", chunk).fetchone()
        held += int(row[0])
    return len(listed) - held
