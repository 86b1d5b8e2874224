"""MongoDB side of re-extraction: pages by _id, item updates in bulk.

Safe beside a running master: each update is a `$set` of the item's `data`
(and `updated_at`) and of the page's `signature`, `item_key`, `simhash` and
`near_duplicate_of`, filtered on the fetch time it was made from, so a page
the master stored again meanwhile keeps
its newer data; nothing else of either document is touched. The chunk's
history versions are appended after its updates, as the store writer does
(mongo/history.py), then their keyed items (mongo/keyed.py), and the
checkpoint last, in `reextract_checkpoints`.
"""

from __future__ import annotations

import datetime as dt
import zlib
from collections.abc import Sequence
from typing import Any

from pymongo import UpdateOne
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import BulkWriteError, PyMongoError

from nadird.common.errors import StoreError
from nadird.store.mongo.connect import one_line
from nadird.store.mongo.docs import (
    ITEM_FIELDS,
    Document,
    item_id,
    record_from_document,
    to_datetime,
)
from nadird.store.mongo.history import append_mongo
from nadird.store.mongo.keyed import upsert_mongo
from nadird.store.stored import (
    CORRUPT_BODY,
    DUPLICATE,
    NO_ITEM,
    UNREADABLE,
    Checkpoint,
    CheckpointOf,
    PageUpdate,
    StoredPage,
    UpdateOutcome,
    readable,
)

CHECKPOINTS = "reextract_checkpoints"
Collection = AsyncCollection[Document]


class PageUpdates:
    """MongoStore's side of store/stored.py's PageStore (a base of MongoStore,
    which opens the collections)."""

    _pages: Collection | None
    _items: Collection | None
    _changes: Collection | None
    _keyed: Collection | None

    def _open_collections(self) -> tuple[Collection, Collection, Collection, Collection]:
        if self._pages is None or self._items is None:
            raise StoreError(f"{self!r}: store is not open")
        if self._changes is None or self._keyed is None:
            raise StoreError(f"{self!r}: store is not open")
        return self._pages, self._items, self._changes, self._keyed

    async def read_pages(
        self, job: str, after: str | None, since: float | None, limit: int
    ) -> list[StoredPage]:
        pages, items, _, _ = self._open_collections()
        try:
            return await read_chunk(pages, items, job, after, since, limit)
        except PyMongoError as exc:
            raise StoreError(f"{self!r}: read failed: {one_line(str(exc))}") from exc

    async def update_page_data(
        self, updates: Sequence[PageUpdate], checkpoint: CheckpointOf | None = None
    ) -> UpdateOutcome:
        pages, items, changes, keyed = self._open_collections()
        try:
            return await update_data(pages, items, changes, keyed, updates, checkpoint)
        except PyMongoError as exc:
            raise StoreError(f"{self!r}: update failed: {one_line(str(exc))}") from exc

    async def load_checkpoint(self, name: str) -> dict[str, Any] | None:
        pages, _, _, _ = self._open_collections()
        try:
            return await load_checkpoint(pages.database[CHECKPOINTS], name)
        except PyMongoError as exc:
            raise StoreError(f"{self!r}: read failed: {one_line(str(exc))}") from exc


async def read_chunk(
    pages: Collection,
    items: Collection,
    job: str,
    after: str | None,
    since: float | None,
    limit: int,
) -> list[StoredPage]:
    query: dict[str, Any] = {"job": job}
    if after:
        query["_id"] = {"$gt": bytes.fromhex(after)}
    if since is not None:
        query["fetched_at"] = {"$gte": to_datetime(since)}
    found = await pages.find(query).sort("_id", 1).limit(limit).to_list()
    ids = [item_id(bytes(p["_id"]), job) for p in found]
    projection = dict.fromkeys((*ITEM_FIELDS, "fetched_at"), 1)
    owned = {bytes(d["_id"]): d async for d in items.find({"_id": {"$in": ids}}, projection)}
    return [_page(doc, owned.get(item_id(bytes(doc["_id"]), job))) for doc in found]


def _page(doc: Document, item: Document | None) -> StoredPage:
    key, guard = bytes(doc["_id"]).hex(), doc.get("fetched_at")
    try:
        record = record_from_document(doc, item)
    except zlib.error:
        return StoredPage(key, guard, None, CORRUPT_BODY)
    except (KeyError, TypeError, ValueError, AttributeError):  # another shape of document
        return StoredPage(key, guard, None, UNREADABLE)
    if not readable(record) or not isinstance(guard, dt.datetime):
        return StoredPage(key, guard, None, UNREADABLE)
    if doc.get("duplicate_of") is not None:
        return StoredPage(key, guard, record, DUPLICATE)
    if record.error is None and (item is None or item.get("fetched_at") != guard):
        return StoredPage(key, guard, record, NO_ITEM)
    return StoredPage(key, guard, record)


async def update_data(
    pages: Collection,
    items: Collection,
    changes: Collection,
    keyed: Collection,
    updates: Sequence[PageUpdate],
    checkpoint: CheckpointOf | None,
) -> UpdateOutcome:
    outcome = UpdateOutcome()
    if updates:
        landed = await _update_items(items, updates, outcome)
        ops = [
            UpdateOne(
                {"_id": u.record.fp, "fetched_at": u.page.guard},
                {
                    "$set": {
                        "signature": u.record.signature,
                        "item_key": u.record.item_key,
                        "simhash": u.record.simhash,
                        "near_duplicate_of": u.record.near_duplicate_of,
                    }
                },
            )
            for u in landed
        ]
        if ops:
            await pages.bulk_write(ops, ordered=False)
        outcome.landed = [u.page.key for u in landed]
        outcome.versions = await append_mongo(changes, [u.record for u in landed], True)
        await upsert_mongo(keyed, [u.record for u in landed])
    if checkpoint is not None:
        await save_checkpoint(pages.database[CHECKPOINTS], checkpoint(outcome))
    return outcome


async def _update_items(
    items: Collection, updates: Sequence[PageUpdate], outcome: UpdateOutcome
) -> list[PageUpdate]:
    """Apply the item updates; the ones that landed (the others counted)."""
    now = dt.datetime.now(dt.UTC)
    ops = [
        UpdateOne(
            {"_id": item_id(u.record.fp, u.record.job), "fetched_at": u.page.guard},
            {"$set": {"data": u.record.data, "updated_at": now}},
        )
        for u in updates
    ]
    refused: set[int] = set()
    try:
        matched = (await items.bulk_write(ops, ordered=False)).matched_count
    except BulkWriteError as exc:
        details: Any = exc.details
        if details.get("writeConcernErrors"):
            raise
        refused = {int(e["index"]) for e in details.get("writeErrors", [])}
        matched = int(details.get("nMatched", 0))
    outcome.failed = len(refused)
    tried = [u for i, u in enumerate(updates) if i not in refused]
    if matched < len(tried):
        # Some were stored again by the master since they were read: those
        # items now carry another fetch time.
        ids = [item_id(u.record.fp, u.record.job) for u in tried]
        now_at = {
            bytes(d["_id"]): d.get("fetched_at")
            async for d in items.find({"_id": {"$in": ids}}, {"fetched_at": 1})
        }
        tried = [u for u, i in zip(tried, ids, strict=True) if now_at.get(i) == u.page.guard]
    outcome.refetched = len(updates) - len(refused) - len(tried)
    return tried


async def save_checkpoint(checkpoints: Collection, checkpoint: Checkpoint) -> None:
    if checkpoint.value is None:
        await checkpoints.delete_one({"_id": checkpoint.name})
    else:
        doc = {"_id": checkpoint.name, "value": checkpoint.value}
        await checkpoints.replace_one({"_id": checkpoint.name}, doc, upsert=True)


async def load_checkpoint(checkpoints: Collection, name: str) -> dict[str, Any] | None:
    found = await checkpoints.find_one({"_id": name})
    value = None if found is None else found.get("value")
    return value if isinstance(value, dict) else None
