"""Indexes of the collections, created idempotently at open.

createIndexes with an identical specification is a no-op on the server, so
this runs on every start. The one index whose options change with the config,
the TTL on pages.fetched_at, is adjusted with collMod (or dropped when
retention is set to 0) instead of failing with an options conflict.

Through mongos (a sharded cluster) the `url` index is created non-unique: a
sharded collection accepts unique indexes only on its shard key, and `_id`
(the URL fingerprint, the suggested hashed shard key) already makes URLs
unique.
"""

from __future__ import annotations

from typing import Any

from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.asynchronous.database import AsyncDatabase

from nadird.store.mongo.docs import ITEMS, PAGES
from nadird.store.mongo.history import CHANGES, OBSOLETE_INDEXES, change_indexes
from nadird.store.mongo.keyed import KEYED, keyed_indexes

TTL_INDEX = "fetched_at_ttl"
_DAY = 86_400


def page_indexes(unique: bool) -> list[IndexModel]:
    return [
        IndexModel([("url", ASCENDING)], name="url", unique=unique),
        IndexModel([("fetched_at", DESCENDING)], name="fetched_at_desc"),
        # Export since a time (--since, --cursor) pages through it in order.
        IndexModel([("fetched_at", ASCENDING), ("_id", ASCENDING)], name="fetched_at_id"),
        # Export by job pages through _id within one job.
        IndexModel([("job", ASCENDING), ("_id", ASCENDING)], name="job_id"),
    ]


def item_indexes() -> list[IndexModel]:
    return [
        IndexModel([("job", ASCENDING), ("updated_at", DESCENDING)], name="job_updated_at"),
        # Content dedup looks pages up by (job, text fingerprint). Neither
        # unique nor partial: items without text (null) must not collide, and
        # servers differ in when they use a partial index (SecantusDB scans).
        # One master writes a crawl's database, so dedup needs no server-side
        # arbitration; two masters racing on one job could at worst store
        # the same text twice.
        IndexModel([("job", ASCENDING), ("text_fp", ASCENDING)], name="job_text_fp"),
    ]


async def ensure_indexes(
    db: AsyncDatabase[dict[str, Any]], retention_days: int, sharded: bool
) -> None:
    await db[PAGES].create_indexes(page_indexes(unique=not sharded))
    await db[ITEMS].create_indexes(item_indexes())
    await db[CHANGES].create_indexes(change_indexes())
    await _drop_obsolete(db)
    await db[KEYED].create_indexes(keyed_indexes())
    await _ensure_ttl(db, retention_days)


async def _drop_obsolete(db: AsyncDatabase[dict[str, Any]]) -> None:
    """Drop the indexes a newer one replaced (after it exists: no moment
    without one to serve the lookups)."""
    present = await db[CHANGES].index_information()
    for name in OBSOLETE_INDEXES:
        if name in present:
            await db[CHANGES].drop_index(name)


async def _ensure_ttl(db: AsyncDatabase[dict[str, Any]], retention_days: int) -> None:
    pages = db[PAGES]
    existing = (await pages.index_information()).get(TTL_INDEX)
    if retention_days == 0:
        if existing is not None:
            await pages.drop_index(TTL_INDEX)
        return
    seconds = retention_days * _DAY
    if existing is None:
        await pages.create_index(
            [("fetched_at", ASCENDING)], name=TTL_INDEX, expireAfterSeconds=seconds
        )
    elif existing.get("expireAfterSeconds") != seconds:
        await db.command("collMod", PAGES, index={"name": TTL_INDEX, "expireAfterSeconds": seconds})
