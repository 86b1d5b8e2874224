"""SQLite side of re-extraction: pages by rowid, updates in one short transaction.

Runs on the store's thread (SqliteStore). Safe beside a running master: WAL
lets the reads run during its writes, each chunk's updates are one
IMMEDIATE transaction of a few milliseconds (the connection's busy timeout
waits out the master's), and an update is applied only while the row still
holds the fetch it was made from. History versions and keyed items follow
the updates as they follow the store writer's, and the checkpoint (a row
of `meta`), all in the chunk's one transaction.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Sequence
from typing import Any

from nadird.common.errors import StoreError
from nadird.store.history import append_sqlite
from nadird.store.sqlite.items import upsert_items_sync
from nadird.store.sqlite.schema import NAMES, from_row
from nadird.store.stored import (
    CORRUPT_BODY,
    UNREADABLE,
    Checkpoint,
    CheckpointOf,
    PageUpdate,
    StoredPage,
    UpdateOutcome,
    readable,
)

_FETCHED_AT = NAMES.index("fetched_at")
_SELECT = f"SELECT rowid, {', '.join(NAMES)} FROM pages WHERE job = ? AND rowid > ?"
_UPDATE = (
    "UPDATE pages SET data = ?, signature = ?, item_key = ?, simhash = ?, near_duplicate_of = ?"
    " WHERE rowid = ? AND fetched_at = ?"
)
_CHECKPOINT = "checkpoint:"


def read_chunk(
    conn: sqlite3.Connection, job: str, after: str | None, since: float | None, limit: int
) -> list[StoredPage]:
    sql, args = _SELECT, [job, int(after) if after else 0]
    if since is not None:
        sql, args = sql + " AND fetched_at >= ?", [*args, since]
    rows = conn.execute(sql + " ORDER BY rowid LIMIT ?", (*args, limit)).fetchall()
    return [_page(row) for row in rows]


def _page(row: tuple[Any, ...]) -> StoredPage:
    key, values = str(row[0]), row[1:]
    guard = values[_FETCHED_AT]
    try:
        record = from_row(values)
    except zlib.error:
        return StoredPage(key, guard, None, CORRUPT_BODY)
    except (TypeError, ValueError):  # JSON, or a cell of another type
        return StoredPage(key, guard, None, UNREADABLE)
    if not readable(record):
        return StoredPage(key, guard, None, UNREADABLE)
    return StoredPage(key, guard, record)


def update_data(
    conn: sqlite3.Connection,
    path: str,
    updates: Sequence[PageUpdate],
    checkpoint: CheckpointOf | None,
) -> UpdateOutcome:
    outcome = UpdateOutcome()
    try:
        conn.execute("BEGIN IMMEDIATE")
        landed = []
        for update in updates:
            record = update.record
            data = json.dumps(record.data, ensure_ascii=False, separators=(",", ":"))
            key, guard = int(update.page.key), update.page.guard
            args = (
                *(data, record.signature, record.item_key, record.simhash),
                *(record.near_duplicate_of, key, guard),
            )
            if conn.execute(_UPDATE, args).rowcount:
                landed.append(record)
                outcome.landed.append(update.page.key)
        outcome.refetched = len(updates) - len(landed)
        outcome.versions = append_sqlite(conn, landed, reextract=True)  # marked as such
        upsert_items_sync(conn, landed)  # and their keyed items
        if checkpoint is not None:
            _save_checkpoint(conn, checkpoint(outcome))
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise StoreError(f"{path}: update of {len(updates)} pages failed: {exc}") from exc
    return outcome


def _save_checkpoint(conn: sqlite3.Connection, checkpoint: Checkpoint) -> None:
    key = _CHECKPOINT + checkpoint.name
    if checkpoint.value is None:
        conn.execute("DELETE FROM meta WHERE key = ?", (key,))
        return
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, json.dumps(checkpoint.value)),
    )


def load_checkpoint(conn: sqlite3.Connection, name: str) -> dict[str, Any] | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_CHECKPOINT + name,)).fetchone()
    if row is None:
        return None
    try:
        value = json.loads(row[0])
    except ValueError:
        return None  # unreadable: start over rather than guess
    return value if isinstance(value, dict) else None
