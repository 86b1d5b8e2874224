"""Reading pages back from MongoDB in `_id` order (or by fetch time), with their items."""

from __future__ import annotations

from typing import Any

from pymongo.asynchronous.collection import AsyncCollection

from nadird.store.mongo.docs import ITEM_FIELDS, Document, item_id, to_datetime


async def read_chunk(
    pages_coll: AsyncCollection[Document],
    items_coll: AsyncCollection[Document],
    job: str | None,
    after: Document | None,
    rows: int,
    since: float | None = None,
) -> tuple[list[Document], dict[bytes, Document]]:
    """The next `rows` pages after the page `after` (of `job`, or all), and
    the items they (or the page they duplicate) own, by item id. With
    `since`, the pages fetched at or after it, by fetch time (the
    fetched_at_id index), else by `_id`."""
    query: dict[str, Any] = {} if job is None else {"job": job}
    if since is None:
        if after is not None:
            query["_id"] = {"$gt": after["_id"]}
        order = [("_id", 1)]
    else:
        query["fetched_at"] = {"$gte": to_datetime(since)}
        if after is not None:
            at, last = after["fetched_at"], after["_id"]
            query["$or"] = [{"fetched_at": {"$gt": at}}, {"fetched_at": at, "_id": {"$gt": last}}]
        order = [("fetched_at", 1), ("_id", 1)]
    pages = await pages_coll.find(query).sort(order).limit(rows).to_list()
    return pages, await _items_of(items_coll, pages)


async def read_by_ids(
    pages_coll: AsyncCollection[Document], items_coll: AsyncCollection[Document], fps: list[bytes]
) -> tuple[list[Document], dict[bytes, Document]]:
    """The pages of these fingerprints (those stored), bodies left out, and their items."""
    pages = await pages_coll.find({"_id": {"$in": fps}}, {"body": 0}).to_list()
    return pages, await _items_of(items_coll, pages)


def owner_item(page: Document) -> bytes:
    """The id of the item a page owns, or of the one the page it duplicates owns."""
    return item_id(bytes(page.get("duplicate_of") or page["_id"]), page["job"])


async def _items_of(
    items_coll: AsyncCollection[Document], pages: list[Document]
) -> dict[bytes, Document]:
    """The items `pages` (or the pages they duplicate) own, by item id."""
    ids = list({owner_item(p) for p in pages})
    items: dict[bytes, Document] = {}
    if ids:
        found = items_coll.find({"_id": {"$in": ids}}, dict.fromkeys(ITEM_FIELDS, 1))
        async for doc in found:
            items[bytes(doc["_id"])] = doc
    return items
