"""MongoDB side of history retention (store/retention.py): a step reads its
URLs one after the other along the `job_url_time` index (the next URL after
the cursor, then that URL's version times, newest first) and deletes what
goes in one `delete_many` by _id. The store writer runs beside it: a step
holds no lock of its, and deletes at most `limit` documents."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pymongo import ASCENDING, DESCENDING
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import PyMongoError

from nadird.common.errors import StoreError
from nadird.store.mongo.connect import one_line
from nadird.store.retention import URLS_PER_STEP, Keep, TrimStep, doomed, plan_step

Collection = AsyncCollection[dict[str, Any]]
_BY_URL = [("job", ASCENDING), ("url", ASCENDING), ("fetched_at", ASCENDING), ("_id", ASCENDING)]
_NEWEST = [("fetched_at", DESCENDING), ("_id", DESCENDING)]


class HistoryTrim:
    """MongoStore's side of store/retention.py's TrimsHistory (a base of
    MongoStore, which opens the collection)."""

    _changes: Collection | None

    async def trim_history(self, keep: Keep, after: str | None, limit: int) -> TrimStep:
        if self._changes is None:
            raise StoreError(f"{self!r}: store is not open")
        try:
            return await trim_step(self._changes, keep, after, limit)
        except PyMongoError as exc:
            raise StoreError(f"{self!r}: history trim failed: {one_line(str(exc))}") from exc


async def trim_step(changes: Collection, keep: Keep, after: str | None, limit: int) -> TrimStep:
    by_url: list[tuple[str, list[Any]]] = []
    url = after or ""
    while len(by_url) < URLS_PER_STEP:
        query = {"job": keep.job, "url": {"$gt": url}}
        found = await changes.find_one(query, {"url": 1}, sort=_BY_URL)
        if found is None:
            break
        url = str(found["url"])
        versions = changes.find({"job": keep.job, "url": url}, {"fetched_at": 1}).sort(_NEWEST)
        times = [(doc["_id"], _seconds(doc["fetched_at"])) async for doc in versions]
        by_url.append((url, doomed(times, keep)))
    ids, step = plan_step(by_url, after, limit, len(by_url) == URLS_PER_STEP)
    if ids:
        await changes.delete_many({"_id": {"$in": ids}})
    return step


def _seconds(at: dt.datetime) -> float:
    """PyMongo's naive datetimes are UTC (not the machine's local time)."""
    return (at if at.tzinfo is not None else at.replace(tzinfo=dt.UTC)).timestamp()
