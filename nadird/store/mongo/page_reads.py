"""MongoStore's reads for the console's URL and item pages: one page with
its body, a page of one URL's versions newest first (the `job_url_time`
index, read backwards), one keyed item (its unique (job, key) index)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pymongo import DESCENDING
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import PyMongoError

from nadird.common.errors import StoreError
from nadird.store.base import PageRecord
from nadird.store.history import Version
from nadird.store.items import KeyedItem
from nadird.store.mongo.connect import one_line
from nadird.store.mongo.docs import ITEMS, PAGES, record_from_document
from nadird.store.mongo.history import CHANGES, version_of
from nadird.store.mongo.keyed import KEYED, item_of_document
from nadird.store.mongo.reads import owner_item

Collection = AsyncCollection[dict[str, Any]]
T = TypeVar("T")
_NEWEST = [("fetched_at", DESCENDING), ("_id", DESCENDING)]


class PageHistoryReads:
    """A base of MongoStore, which opens the collections (`_coll`)."""

    def _coll(self, name: str) -> Collection:
        raise NotImplementedError  # MongoStore's

    async def _read(self, read: Callable[[], Awaitable[T]]) -> T:
        try:
            return await read()
        except PyMongoError as exc:
            raise StoreError(f"{self!r}: read failed: {one_line(str(exc))}") from exc

    async def stored_page(self, fp: bytes) -> PageRecord | None:
        """A page's record with its body (the console's URL page)."""

        async def read() -> PageRecord | None:
            page = await self._coll(PAGES).find_one({"_id": fp})
            if page is None:
                return None
            item = await self._coll(ITEMS).find_one({"_id": owner_item(page)})
            return record_from_document(page, item)

        return await self._read(read)

    async def page_versions(
        self, job: str, url: str, offset: int, limit: int
    ) -> tuple[int, list[Version]]:
        """How many versions a page has, and `limit` from `offset`, newest
        first, with the one before them (as the SQLite store answers)."""

        async def read() -> tuple[int, list[Version]]:
            changes = self._coll(CHANGES)
            query = {"job": job, "url": url}
            total = await changes.count_documents(query)
            docs = await changes.find(query).sort(_NEWEST).skip(offset).limit(limit + 1).to_list()
            return total, [version_of(doc) for doc in docs]

        return await self._read(read)

    async def keyed_item(self, job: str, key: str) -> KeyedItem | None:
        async def read() -> KeyedItem | None:
            doc = await self._coll(KEYED).find_one({"job": job, "key": key})
            return None if doc is None else item_of_document(doc)

        return await self._read(read)
