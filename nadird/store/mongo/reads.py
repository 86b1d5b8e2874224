"""Reading pages back from MongoDB in `_id` order, with their items."""

from __future__ import annotations

from typing import Any

from pymongo.asynchronous.collection import AsyncCollection

from nadird.store.mongo.docs import ITEM_FIELDS, Document, item_id


async def read_chunk(
    pages_coll: AsyncCollection[Document],
    items_coll: AsyncCollection[Document],
    job: str | None,
    after: bytes | None,
    rows: int,
) -> tuple[list[Document], dict[bytes, Document]]:
    """The next `rows` pages after `after` (of `job`, or all), and the items
    they (or the page they duplicate) own, by item id."""
    query: dict[str, Any] = {} if job is None else {"job": job}
    if after is not None:
        query["_id"] = {"$gt": after}
    cursor = pages_coll.find(query).sort("_id", 1).limit(rows)
    pages = await cursor.to_list()
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
