"""Keyed items: one clean record per (job, business key), across URLs.

A job with `item_key` (items/keys.py) makes a page's item an entity of its
own: the same product reached by three URLs is one keyed item, upserted,
with `first_seen`, `updated_at` and every URL it was seen at. Pages stay one
record per URL (raw body, fetch facts, the fields as extracted there); the
keyed item holds only the clean fields, in its own table (SQLite) or
collection (MongoDB), both named `keyed_items`, unique on (job, key).

Both stores call `upsert_items` from `write` for the records they store,
and anything else that changes records (re-extraction) calls it the same
way. Times are the pages' fetch times, never the clock at the write, so a
replayed batch or a late, older result leaves the same item: `first_seen`
is the earliest fetch, `updated_at` the latest, and the fields (and `url`)
are those of the latest fetch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from nadird.items.schema import VALID
from nadird.store.base import PageRecord

TABLE = "keyed_items"  # the SQLite table and the MongoDB collection


@dataclass(slots=True)
class KeyedItem:
    job: str
    key: str
    url: str  # where it was fetched last
    first_seen: float
    updated_at: float
    data: dict[str, Any]
    urls: list[str] = field(default_factory=list)  # every URL it was seen at, first first
    fallback_from: str | None = None  # of the latest fetch (PageRecord.fallback_from)

    def export_dict(self) -> dict[str, Any]:
        """The JSON shape of `nadird export --items`."""
        return {
            "job": self.job,
            "key": self.key,
            "url": self.url,
            "urls": self.urls,
            "first_seen": self.first_seen,
            "updated_at": self.updated_at,
            "fallback_from": self.fallback_from,
            "data": self.data,
        }


def upsertable(record: PageRecord) -> bool:
    """A fetched, valid item with a key. An invalid one (its key among the
    failures, or any other field) stays on its page: a keyed item holds
    clean fields only, and a failed fetch must not overwrite good ones."""
    return record.item_key is not None and record.error is None and VALID not in record.data


def keyed_items(records: Iterable[PageRecord]) -> list[KeyedItem]:
    """The batch's records as keyed items, one per (job, key): the latest
    fetch's fields, the earliest fetch time and every URL."""
    found: dict[tuple[str, str], KeyedItem] = {}
    for record in records:
        if not upsertable(record):
            continue
        key = record.item_key or ""
        item = found.get((record.job, key))
        if item is None:
            found[record.job, key] = _item_of(record)
            continue
        if record.url not in item.urls:
            item.urls.append(record.url)
        item.first_seen = min(item.first_seen, record.fetched_at)
        if record.fetched_at >= item.updated_at:
            item.updated_at = record.fetched_at
            item.url, item.data, item.fallback_from = record.url, record.data, record.fallback_from
    return list(found.values())


def _item_of(record: PageRecord) -> KeyedItem:
    return KeyedItem(
        job=record.job,
        key=record.item_key or "",
        url=record.url,
        first_seen=record.fetched_at,
        updated_at=record.fetched_at,
        data=record.data,
        urls=[record.url],
        fallback_from=record.fallback_from,
    )
