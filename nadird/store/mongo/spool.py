"""The MongoDB store's local spool: batches acknowledged while MongoDB is away.

One SQLite file with synchronous=FULL, so a batch appended here is on disk
(fsynced) before `append` returns: that is what lets `MongoStore.write`
acknowledge it during an outage. Rows are whole batches in arrival order
(`seq`); the replayer reads from the head and deletes what MongoDB took, in
the same transaction that re-queues retries and records dead letters, so a
crash between the two never loses or doubles a record.

A lock file (flock, released by the kernel when the process dies, even by
kill -9) keeps a second process from replaying the same spool. The spool
remembers which database it holds records for, so pointing a master at
another database with a non-empty spool is an error instead of a silent
replay into the wrong place.
"""

from __future__ import annotations

import dataclasses
import fcntl
import os
import sqlite3
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgpack

from nadird.common.errors import StoreError
from nadird.store.base import FIELD_NAMES, PageRecord, kind_from_text
from nadird.store.db_thread import DbThread

PAYLOAD_VERSION = 1
# Level 1: the spool is written on the hot path during an outage; HTML still
# shrinks several-fold at this level, which is what the size cap cares about.
_ZLIB_LEVEL = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS batches (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    created REAL NOT NULL,
    attempts INTEGER NOT NULL,
    records INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    payload BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS dead_letters (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    fp BLOB NOT NULL,
    url TEXT NOT NULL,
    error TEXT NOT NULL,
    payload BLOB NOT NULL
);
"""


# PageRecord fields by name: the payload is a versioned list of named maps, so
# a spool written by one release is read by the next (no positional tuples; a
# field added later takes its default when an older batch is read). Taken
# from the declaration so that no field can be left out of the spool.
_FIELDS = FIELD_NAMES


class SpoolLocked(StoreError):
    """Another process holds the spool (its master, while `nadird export` reads)."""


@dataclass
class SpooledChunk:
    """Records from the head of the spool, up to and including batch `last_seq`."""

    last_seq: int
    attempts: int
    records: list[PageRecord]


@dataclass
class DeadRecord:
    """A record the database refused for good, and why (the spool's dead_letters table)."""

    record: PageRecord
    error: str


def pack_records(records: Sequence[PageRecord]) -> bytes:
    rows = [{name: getattr(r, name) for name in _FIELDS} for r in records]
    packed: bytes = msgpack.packb({"v": PAYLOAD_VERSION, "records": rows}, use_bin_type=True)
    return zlib.compress(packed, _ZLIB_LEVEL)


def unpack_records(payload: bytes) -> list[PageRecord]:
    data: Any = msgpack.unpackb(zlib.decompress(payload), raw=False)
    if not isinstance(data, dict) or data.get("v") != PAYLOAD_VERSION:
        raise StoreError(f"spool batch of unknown format (version {data.get('v')!r})")
    return [
        PageRecord(**row) if "error_kind" in row else kind_from_text(PageRecord(**row))
        for row in data["records"]
    ]


def _dead_payload(record: PageRecord) -> bytes:
    try:
        return pack_records([record])
    except (OverflowError, TypeError, ValueError):
        # What made MongoDB refuse it may stop msgpack too: keep a readable copy.
        data = {"unencodable": repr(record.data)[:100_000]}
        return pack_records([dataclasses.replace(record, data=data)])


class Spool:
    """An fsynced FIFO of record batches in one SQLite file.

    `records` and `bytes` (compressed payload bytes held) are kept in memory
    and updated after each transaction commits, so reading them is free.
    """

    def __init__(self, path: str, target: str) -> None:
        self.path = path
        self.target = target
        self.records = 0
        self.bytes = 0
        self.dead_letters = 0
        self._db = DbThread(path, "spool")
        self._lock_fd: int | None = None

    @property
    def is_open(self) -> bool:
        return self._db.is_open

    def exists(self) -> bool:
        return os.path.exists(self.path)

    async def open(self) -> None:
        if self._db.is_open:
            return
        try:
            await self._db.open(self._open_sync)
        except (sqlite3.Error, OSError) as exc:
            self._release_lock()
            raise StoreError(f"{self.path}: spool: {exc}") from exc
        except BaseException:
            self._release_lock()
            raise

    async def close(self) -> None:
        try:
            await self._db.close()
        finally:
            self._release_lock()

    async def append(self, records: Sequence[PageRecord], attempts: int = 0) -> None:
        """Durably queue one batch at the tail; on disk when this returns."""
        if records:
            await self._db.run(self._append_sync, list(records), attempts)

    async def head(self, max_records: int) -> SpooledChunk | None:
        """The oldest batches, at least one, until `max_records` is reached."""
        return await self._db.run(self._head_sync, max_records)

    async def settle(
        self,
        last_seq: int,
        retry: Sequence[PageRecord] = (),
        attempts: int = 0,
        dead: Sequence[DeadRecord] = (),
    ) -> None:
        """Drop batches up to `last_seq`, re-queue `retry`, keep `dead`: one transaction."""
        await self._db.run(self._settle_sync, last_seq, list(retry), attempts, list(dead))

    async def add_dead_letters(self, dead: Sequence[DeadRecord]) -> None:
        if dead:
            await self._db.run(self._settle_sync, 0, [], 0, list(dead))

    def _release_lock(self) -> None:
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            os.close(fd)

    # Everything below runs on the executor thread only.

    def _open_sync(self) -> sqlite3.Connection:
        parent = os.path.dirname(self.path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        self._take_lock()
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            # FULL (not NORMAL as in the main SQLite store): an acknowledged
            # batch must survive a power loss too, as MongoDB's journal would.
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.executescript(_SCHEMA)
            self._check_target(conn)
            self._load_counts(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _take_lock(self) -> None:
        fd = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise SpoolLocked(f"spool {self.path} is in use by another process") from None
        self._lock_fd = fd

    def _check_target(self, conn: sqlite3.Connection) -> None:
        row = conn.execute("SELECT value FROM meta WHERE key = 'target'").fetchone()
        (held,) = conn.execute("SELECT count(*) FROM batches").fetchone()
        if row is not None and row[0] != self.target and held:
            raise StoreError(
                f"spool {self.path} holds {held} batches for {row[0]}, not {self.target}: "
                "open that store once to replay them, or move the file away"
            )
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('target', ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (self.target,),
        )

    def _load_counts(self, conn: sqlite3.Connection) -> None:
        records, size = conn.execute(
            "SELECT coalesce(sum(records), 0), coalesce(sum(bytes), 0) FROM batches"
        ).fetchone()
        (dead,) = conn.execute("SELECT count(*) FROM dead_letters").fetchone()
        self.records, self.bytes, self.dead_letters = int(records), int(size), int(dead)

    def _append_sync(self, records: list[PageRecord], attempts: int) -> None:
        payload = pack_records(records)
        conn = self._db.conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._insert_batch(conn, payload, len(records), attempts)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self.records += len(records)
        self.bytes += len(payload)

    @staticmethod
    def _insert_batch(conn: sqlite3.Connection, payload: bytes, count: int, attempts: int) -> None:
        conn.execute(
            "INSERT INTO batches (created, attempts, records, bytes, payload) "
            "VALUES (?, ?, ?, ?, ?)",
            (time.time(), attempts, count, len(payload), payload),
        )

    def _head_sync(self, max_records: int) -> SpooledChunk | None:
        conn = self._db.conn()
        records: list[PageRecord] = []
        last_seq = attempts = 0
        # Row by row: a chunk stops once it holds max_records, so only the
        # batches needed are decompressed.
        cursor = conn.execute("SELECT seq, attempts, payload FROM batches ORDER BY seq")
        try:
            for seq, batch_attempts, payload in cursor:
                records.extend(unpack_records(payload))
                last_seq, attempts = int(seq), max(attempts, int(batch_attempts))
                if len(records) >= max_records:
                    break
        finally:
            cursor.close()
        if not last_seq:
            return None
        return SpooledChunk(last_seq, attempts, records)

    def _settle_sync(
        self, last_seq: int, retry: list[PageRecord], attempts: int, dead: list[DeadRecord]
    ) -> None:
        conn = self._db.conn()
        retry_payload = pack_records(retry) if retry else b""
        conn.execute("BEGIN IMMEDIATE")
        try:
            removed, removed_bytes = conn.execute(
                "SELECT coalesce(sum(records), 0), coalesce(sum(bytes), 0) FROM batches "
                "WHERE seq <= ?",
                (last_seq,),
            ).fetchone()
            conn.execute("DELETE FROM batches WHERE seq <= ?", (last_seq,))
            if retry:
                self._insert_batch(conn, retry_payload, len(retry), attempts)
            for letter in dead:
                conn.execute(
                    "INSERT INTO dead_letters (at, fp, url, error, payload) VALUES (?, ?, ?, ?, ?)",
                    (
                        time.time(),
                        letter.record.fp,
                        letter.record.url,
                        letter.error,
                        _dead_payload(letter.record),
                    ),
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self.records += len(retry) - int(removed)
        self.bytes += len(retry_payload) - int(removed_bytes)
        self.dead_letters += len(dead)
        if self.records == 0 and removed:
            self._truncate(conn)

    @staticmethod
    def _truncate(conn: sqlite3.Connection) -> None:
        # Drained: give the disk back. VACUUM rebuilds the (now empty) file
        # through the WAL, and the checkpoint copies it back and cuts the WAL
        # to zero bytes; both are cheap on an empty table.
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
