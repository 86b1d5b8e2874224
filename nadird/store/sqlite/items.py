"""The SQLite `keyed_items` table (store/items.py says what it holds).

(job, key) is the primary key: the same constraint as MongoDB's unique
index. One statement upserts an item and merges it with what is stored, so
it runs in the transaction that writes the pages (a crash keeps both or
neither) and applies a batch's items in order.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from nadird.store.base import PageRecord
from nadird.store.items import TABLE, KeyedItem, keyed_items

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    job TEXT NOT NULL,
    key TEXT NOT NULL,
    url TEXT NOT NULL,
    urls TEXT NOT NULL,
    first_seen REAL NOT NULL,
    updated_at REAL NOT NULL,
    data TEXT NOT NULL,
    fallback_from TEXT,
    PRIMARY KEY (job, key)
);
"""

# SET expressions read the stored row as it was (SQLite evaluates them all
# before assigning), so `updated_at` below is the stored one: the fields
# follow the latest fetch, an older, late result only adds its URL.
_NEWER = "excluded.updated_at >= updated_at"
_UPSERT = f"""
INSERT INTO {TABLE} (job, key, url, urls, first_seen, updated_at, data, fallback_from)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (job, key) DO UPDATE SET
    first_seen = min(first_seen, excluded.first_seen),
    updated_at = max(updated_at, excluded.updated_at),
    url = CASE WHEN {_NEWER} THEN excluded.url ELSE url END,
    data = CASE WHEN {_NEWER} THEN excluded.data ELSE data END,
    fallback_from = CASE WHEN {_NEWER} THEN excluded.fallback_from ELSE fallback_from END,
    urls = (
        SELECT json_group_array(value) FROM (
            SELECT value FROM json_each({TABLE}.urls)
            UNION ALL
            SELECT value FROM json_each(excluded.urls)
            WHERE value NOT IN (SELECT value FROM json_each({TABLE}.urls))
        )
    )
"""
_COLUMNS = "job, key, url, urls, first_seen, updated_at, data, fallback_from"
_SELECT = f"SELECT rowid, {_COLUMNS} FROM {TABLE} WHERE rowid > ?"


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def upsert_items_sync(conn: sqlite3.Connection, records: Iterable[PageRecord]) -> int:
    """Upsert the keyed items of `records` (inside the caller's transaction);
    returns how many items the batch held."""
    items = keyed_items(records)
    conn.executemany(
        _UPSERT,
        [
            (
                item.job,
                item.key,
                item.url,
                _text(item.urls),
                item.first_seen,
                item.updated_at,
                _text(item.data),
                item.fallback_from,
            )
            for item in items
        ],
    )
    return len(items)


def items_chunk(
    conn: sqlite3.Connection, job: str | None, after: int, limit: int
) -> tuple[list[KeyedItem], int]:
    """Up to `limit` items (of one job) after rowid `after`, and the last rowid."""
    sql, args = _SELECT, list[Any]([after])
    if job is not None:
        sql += " AND job = ?"
        args.append(job)
    rows: Sequence[Any] = conn.execute(sql + " ORDER BY rowid LIMIT ?", (*args, limit)).fetchall()
    return [_item(row[1:]) for row in rows], int(rows[-1][0]) if rows else after


def item_of(conn: sqlite3.Connection, job: str, key: str) -> KeyedItem | None:
    """One keyed item (its primary key), or None."""
    row = conn.execute(f"SELECT {_COLUMNS} FROM {TABLE} WHERE job = ? AND key = ?", (job, key))
    found = row.fetchone()
    return None if found is None else _item(found)


def _item(row: Sequence[Any]) -> KeyedItem:
    job, key, url, urls, first_seen, updated_at, data, fallback_from = row
    return KeyedItem(
        job=job,
        key=key,
        url=url,
        urls=json.loads(urls),
        first_seen=first_seen,
        updated_at=updated_at,
        data=json.loads(data),
        fallback_from=fallback_from,
    )
