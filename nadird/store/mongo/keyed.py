"""Keyed items in MongoDB: the `keyed_items` collection (store/items.py).

One document per (job, key), unique by the `job_key` index. A batch costs
two unordered bulks, whatever its size: the first upserts every item and
merges what needs no comparison (`$min` first_seen, `$max` updated_at,
`$addToSet` the URLs); the second sets the fields and `url` only where the
stored `updated_at` is now this batch's, i.e. where this fetch is the
latest. A replayed batch, or an older result arriving late, so changes
nothing it should not. Both are keyed by (job, key), never by `_id`.

Through mongos the index stays unique only if the collection is sharded on
(job, key) (or not sharded): a sharded collection enforces uniqueness only
on its shard key.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator, Iterable
from typing import Any

from pymongo import ASCENDING, IndexModel, UpdateOne
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import BulkWriteError, PyMongoError

from nadird.common.errors import StoreError
from nadird.common.logs import get_logger
from nadird.store.base import PageRecord
from nadird.store.items import TABLE, KeyedItem, keyed_items
from nadird.store.mongo.connect import one_line

KEYED = TABLE
Collection = AsyncCollection[dict[str, Any]]
log = get_logger()
_CHUNK = 500


def keyed_indexes() -> list[IndexModel]:
    return [IndexModel([("job", ASCENDING), ("key", ASCENDING)], name="job_key", unique=True)]


def _date(ts: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts, tz=dt.UTC)


def _timestamp(moment: dt.datetime) -> float:
    if moment.tzinfo is None:  # a client without tz_aware: BSON dates are UTC
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()


async def upsert_mongo(keyed: Collection, records: Iterable[PageRecord]) -> int:
    """Upsert the keyed items of `records`; returns how many there were.

    A document the server refuses (too large, say) is logged and left out:
    it must not send the whole batch back to the spool for ever. A failed
    write concern, or the server gone, raises (the caller spools the batch).
    """
    items = keyed_items(records)
    if not items:
        return 0
    merges = [
        UpdateOne(
            {"job": item.job, "key": item.key},
            {
                "$min": {"first_seen": _date(item.first_seen)},
                "$max": {"updated_at": _date(item.updated_at)},
                "$addToSet": {"urls": {"$each": item.urls}},
            },
            upsert=True,
        )
        for item in items
    ]
    latest = [
        UpdateOne(
            {"job": item.job, "key": item.key, "updated_at": _date(item.updated_at)},
            {"$set": {"url": item.url, "data": item.data, "fallback_from": item.fallback_from}},
        )
        for item in items
    ]
    await _bulk(keyed, merges, items)
    await _bulk(keyed, latest, items)
    return len(items)


async def _bulk(keyed: Collection, ops: list[UpdateOne], items: list[KeyedItem]) -> None:
    try:
        await keyed.bulk_write(ops, ordered=False)
    except BulkWriteError as exc:
        details: Any = exc.details
        if details.get("writeConcernErrors"):
            raise
        for error in details.get("writeErrors", []):
            item = items[int(error["index"])]
            log.error(
                "mongo_keyed_item_failed",
                job=item.job,
                key=item.key[:200],
                url=item.url,
                error=f"{error.get('code')}: {error.get('errmsg', '')}"[:300],
            )


async def read_keyed(keyed: Collection, job: str | None, store: str) -> AsyncIterator[KeyedItem]:
    """The keyed items (of one job), in _id order, a chunk per round trip;
    StoreError naming `store` when the server fails."""
    query: dict[str, Any] = {} if job is None else {"job": job}
    last: Any = None
    while True:
        page = dict(query) if last is None else {**query, "_id": {"$gt": last}}
        try:
            docs = await keyed.find(page).sort("_id", ASCENDING).limit(_CHUNK).to_list()
        except PyMongoError as exc:
            raise StoreError(f"{store}: read failed: {one_line(str(exc))}") from exc
        for doc in docs:
            yield item_of_document(doc)
        if len(docs) < _CHUNK:
            return
        last = docs[-1]["_id"]


def item_of_document(doc: dict[str, Any]) -> KeyedItem:
    return KeyedItem(
        job=doc["job"],
        key=doc["key"],
        url=doc.get("url", ""),
        first_seen=_timestamp(doc["first_seen"]),
        updated_at=_timestamp(doc["updated_at"]),
        data=doc.get("data") or {},
        urls=list(doc.get("urls", [])),
        fallback_from=doc.get("fallback_from"),
    )
