"""Page history in MongoDB: the `changes` collection (see store/history.py).

One document per version: url, job, fetched_at (a date), signature, data.
Indexed by (job, url, fetched_at, _id) for the latest version of a page and
for `export --changes`, which reads the versions in that order, a chunk per
query after the last one read (keyset pagination: no cursor is left open
while the export writes, and no query skips what earlier ones read); and by
(fetched_at, _id) for the latest changes. MongoDB writes pages and versions without a
transaction, so versions are appended after the pages landed and before the
batch counts as durable: a crash in between leaves the URL queued, its
refetch stores the page again and appends the version, and comparing with
the latest stored version keeps that append from doubling one.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from pymongo import ASCENDING, IndexModel
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import PyMongoError

from nadird.common.errors import StoreError
from nadird.store.base import PageRecord
from nadird.store.history import RECENT_SCAN, Pairing, Version, change_line, versions_of
from nadird.store.mongo.connect import one_line

CHANGES = "changes"
Collection = AsyncCollection[dict[str, Any]]
_ORDER = [("job", ASCENDING), ("url", ASCENDING), ("fetched_at", ASCENDING), ("_id", ASCENDING)]
# Replaced by the two of change_indexes (their keys end with _id, so that
# every sort on them is the index's order); dropped at open.
OBSOLETE_INDEXES = ("url_time", "time")


def change_indexes() -> list[IndexModel]:
    return [
        IndexModel(_ORDER, name="job_url_time"),
        IndexModel([("fetched_at", ASCENDING), ("_id", ASCENDING)], name="time_id"),
    ]


async def append_mongo(
    changes: Collection, records: Iterable[PageRecord], reextract: bool = False
) -> int:
    """A version per record whose signature differs from its page's latest;
    `reextract`: marked as made by `nadird reextract` (absent otherwise)."""
    latest: dict[tuple[str, str], str] = {}  # within this batch
    docs = []
    for v in versions_of(records, reextract):
        key = (v.url, v.job)
        if key not in latest:
            found = await changes.find_one(
                {"url": v.url, "job": v.job}, {"signature": 1}, sort=[("fetched_at", -1)]
            )
            latest[key] = "" if found is None else str(found["signature"])
        if latest[key] == v.signature:
            continue
        latest[key] = v.signature
        doc = {
            "url": v.url,
            "job": v.job,
            "fetched_at": dt.datetime.fromtimestamp(v.fetched_at, dt.UTC),
            "signature": v.signature,
            "data": v.data,
        }
        if v.reextract:
            doc["reextract"] = True
        docs.append(doc)
    if docs:
        await changes.insert_many(docs, ordered=True)
    return len(docs)


async def read_versions(
    changes: Collection, job: str | None, since: float | None, chunk: int
) -> AsyncIterator[Version]:
    """The versions (of `job`, or all) by job, URL, time, `chunk` per query.

    With `since`, those at or after it, each job and URL's first one led by
    the version just before `since` (the old side of its first change).
    """
    start = None if since is None else dt.datetime.fromtimestamp(since, dt.UTC)
    last: dict[str, Any] | None = None
    group: tuple[str, str] | None = None
    while True:
        query = _after(job, start, last)
        docs = await changes.find(query).sort(_ORDER).hint(_ORDER).limit(chunk).to_list()
        for doc in docs:
            if start is not None and (doc["job"], doc["url"]) != group:
                group = (doc["job"], doc["url"])
                before = {"job": doc["job"], "url": doc["url"], "fetched_at": {"$lt": start}}
                found = await changes.find_one(before, sort=[("fetched_at", -1), ("_id", -1)])
                if found is not None:
                    yield version_of(found)
            yield version_of(doc)
        if len(docs) < chunk:
            return
        last = docs[-1]


async def read_changes(
    changes: Collection, job: str | None, since: float | None, chunk: int, store: str
) -> AsyncIterator[dict[str, Any]]:
    """history.diffs of read_versions; StoreError naming `store` when the
    server fails."""
    pairing = Pairing(since)
    try:
        async for version in read_versions(changes, job, since, chunk):
            for change in pairing.changes((version,)):
                yield change
    except PyMongoError as exc:
        raise StoreError(f"{store}: read failed: {one_line(str(exc))}") from exc


def _after(
    job: str | None, start: dt.datetime | None, last: dict[str, Any] | None
) -> dict[str, Any]:
    """The query for the versions after `last` in _ORDER: one branch per key
    that may be the first to grow, each a range of the job_url_time index."""
    base: dict[str, Any] = {} if job is None else {"job": job}
    if start is not None:
        base["fetched_at"] = {"$gte": start}
    if last is None:
        return base
    j, u, t, i = last["job"], last["url"], last["fetched_at"], last["_id"]
    branches: list[dict[str, Any]] = [
        {"job": j, "url": u, "fetched_at": t, "_id": {"$gt": i}},
        {**base, "job": j, "url": u, "fetched_at": {"$gt": t}},
        {**base, "job": j, "url": {"$gt": u}},
    ]
    if job is None:
        branches.append({**base, "job": {"$gt": j}})
    return {"$or": branches}


def version_of(doc: dict[str, Any]) -> Version:
    """One `changes` document as a Version."""
    [version] = _versions([doc])
    return version


def _versions(docs: list[dict[str, Any]]) -> Iterator[Version]:
    for doc in docs:
        at = doc["fetched_at"]
        if at.tzinfo is None:  # PyMongo returns naive UTC unless told otherwise
            at = at.replace(tzinfo=dt.UTC)
        yield Version(
            doc["url"],
            doc["job"],
            at.timestamp(),
            doc["signature"],
            doc["data"],
            doc.get("reextract") is True,
        )


async def recent_mongo(changes: Collection, limit: int) -> list[dict[str, Any]]:
    """The latest `limit` changes, newest first, as history.diffs writes them:
    the newest versions by the time index, each one's previous version by
    the (url, time) index; at most RECENT_SCAN versions looked at."""
    found: list[dict[str, Any]] = []
    newest = changes.find({}).sort([("fetched_at", -1), ("_id", -1)]).limit(RECENT_SCAN)
    async for doc in newest:
        if doc.get("reextract") is True:  # the rules changed, not the site
            continue
        at, key = doc["fetched_at"], doc["_id"]
        # Before it in (time, _id) order: a re-extraction shares its time
        # with the version it follows, so "not this one" is not enough.
        earlier = [{"fetched_at": {"$lt": at}}, {"fetched_at": at, "_id": {"$lt": key}}]
        query = {"url": doc["url"], "job": doc["job"], "$or": earlier}
        before = await changes.find_one(query, sort=[("fetched_at", -1), ("_id", -1)])
        if before is None:
            continue
        [old, new] = _versions([before, doc])
        found.append(change_line(old, new))
        if len(found) >= limit:
            break
    return found
