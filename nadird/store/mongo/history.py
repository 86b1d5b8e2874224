"""Page history in MongoDB: the `changes` collection (see store/history.py).

One document per version: url, job, fetched_at (a date), signature, data.
Indexed by (url, fetched_at) for the latest version of a page and by
fetched_at for `--since`. MongoDB writes pages and versions without a
transaction, so versions are appended after the pages landed and before the
batch counts as durable: a crash in between leaves the URL queued, its
refetch stores the page again and appends the version, and comparing with
the latest stored version keeps that append from doubling one.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from typing import Any

from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.asynchronous.collection import AsyncCollection

from nadird.store.base import PageRecord
from nadird.store.history import RECENT_SCAN, Version, field_changes, versions_of

CHANGES = "changes"
Collection = AsyncCollection[dict[str, Any]]


def change_indexes() -> list[IndexModel]:
    return [
        IndexModel([("url", ASCENDING), ("fetched_at", DESCENDING)], name="url_time"),
        IndexModel([("fetched_at", ASCENDING)], name="time"),
    ]


async def append_mongo(changes: Collection, records: Iterable[PageRecord]) -> int:
    """A version per record whose signature differs from its page's latest."""
    latest: dict[tuple[str, str], str] = {}  # within this batch
    docs = []
    for v in versions_of(records):
        key = (v.url, v.job)
        if key not in latest:
            found = await changes.find_one(
                {"url": v.url, "job": v.job}, {"signature": 1}, sort=[("fetched_at", -1)]
            )
            latest[key] = "" if found is None else str(found["signature"])
        if latest[key] == v.signature:
            continue
        latest[key] = v.signature
        docs.append(
            {
                "url": v.url,
                "job": v.job,
                "fetched_at": dt.datetime.fromtimestamp(v.fetched_at, dt.UTC),
                "signature": v.signature,
                "data": v.data,
            }
        )
    if docs:
        await changes.insert_many(docs, ordered=True)
    return len(docs)


async def read_mongo(changes: Collection, job: str | None) -> list[Version]:
    query = {} if job is None else {"job": job}
    cursor = changes.find(query).sort([("url", 1), ("fetched_at", 1), ("_id", 1)])
    return list(_versions([doc async for doc in cursor]))


def _versions(docs: list[dict[str, Any]]) -> Iterator[Version]:
    for doc in docs:
        at = doc["fetched_at"]
        if at.tzinfo is None:  # PyMongo returns naive UTC unless told otherwise
            at = at.replace(tzinfo=dt.UTC)
        yield Version(doc["url"], doc["job"], at.timestamp(), doc["signature"], doc["data"])


async def recent_mongo(changes: Collection, limit: int) -> list[dict[str, Any]]:
    """The latest `limit` changes, newest first, as history.diffs writes them:
    the newest versions by the time index, each one's previous version by
    the (url, time) index; at most RECENT_SCAN versions looked at."""
    found: list[dict[str, Any]] = []
    newest = changes.find({}).sort([("fetched_at", -1), ("_id", -1)]).limit(RECENT_SCAN)
    async for doc in newest:
        query = {"url": doc["url"], "job": doc["job"], "fetched_at": {"$lte": doc["fetched_at"]}}
        query["_id"] = {"$ne": doc["_id"]}
        before = await changes.find_one(query, sort=[("fetched_at", -1), ("_id", -1)])
        if before is None:
            continue
        [old, new] = _versions([before, doc])
        found.append(
            {
                "url": new.url,
                "job": new.job,
                "time": new.fetched_at,
                "previous_time": old.fetched_at,
                "changes": field_changes(old.data, new.data),
            }
        )
        if len(found) >= limit:
            break
    return found
