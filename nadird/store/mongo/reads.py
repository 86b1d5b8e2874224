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
    ids = list({item_id(bytes(p.get("duplicate_of") or p["_id"]), p["job"]) for p in pages})
    items: dict[bytes, Document] = {}
    if ids:
        found = items_coll.find({"_id": {"$in": ids}}, dict.fromkeys(ITEM_FIELDS, 1))
        async for doc in found:
            items[bytes(doc["_id"])] = doc
    return pages, items
