"""MongoDB store: batched upserts with PyMongo's asyncio client, and a spool.

`write` returns once a batch is durable somewhere: in MongoDB (with the
configured write concern) or, when MongoDB is unreachable or failing, in the
local fsynced spool (`nadird.store.mongo.spool`). While the spool holds anything,
new batches are appended behind it rather than written directly, so MongoDB
receives every record in arrival order and an old result replayed late can
never overwrite a newer one. A background task replays the spool from its
head with growing pauses between failed attempts; when it is empty, writes
go straight to MongoDB again. A store opened with a non-empty spool (a master
restarted after a crash) replays it before `open` returns.

The spool's size is public (`spool_records`, `spool_bytes`); `backpressure`
turns true above `store.spool_max_bytes` so the master can stop handing out
work. Batches are still accepted then: refusing them would only move the
same records into the master's memory.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

from pymongo import AsyncMongoClient
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import ConfigurationError, PyMongoError

from nadird.common.errors import StoreError
from nadird.common.logs import get_logger
from nadird.config import StoreConfig
from nadird.store.base import PageRecord
from nadird.store.items import KeyedItem
from nadird.store.mongo.batch import last_per_fingerprint, merge_outcomes, write_pages
from nadird.store.mongo.connect import (
    Secrets,
    make_client,
    one_line,
    open_error,
    read_password,
    write_concern,
)
from nadird.store.mongo.docs import (
    BSON_LIMIT,
    ITEMS,
    PAGES,
    Document,
    prepare_all,
    record_from_document,
)
from nadird.store.mongo.history import CHANGES, append_mongo, read_changes, recent_mongo
from nadird.store.mongo.keyed import KEYED, read_keyed, upsert_mongo
from nadird.store.mongo.page_reads import PageHistoryReads
from nadird.store.mongo.pages import PageUpdates
from nadird.store.mongo.reads import owner_item, read_by_ids, read_chunk
from nadird.store.mongo.replay import SpoolReplay
from nadird.store.mongo.schema import ensure_indexes
from nadird.store.mongo.spool import DeadRecord, Spool
from nadird.store.mongo.trim import HistoryTrim
from nadird.store.uri import describe_store_uri, split_uri

log = get_logger()

Collection = AsyncCollection[Document]


class MongoStore(SpoolReplay, PageUpdates, HistoryTrim, PageHistoryReads):
    """Store backed by the `pages` and `items` collections of one database."""

    # Pages per query when reading back.
    CHUNK_ROWS = 500
    CHANGE_ROWS = 1000  # versions per query of iter_changes

    def __init__(self, uri: str, config: StoreConfig | None = None) -> None:
        self.uri = uri
        self.config = config if config is not None else StoreConfig(uri=uri)
        self._parts = split_uri(uri)
        self._client: AsyncMongoClient[Document] | None = None
        self._pages: Collection | None = None
        self._items: Collection | None = None
        self._changes: Collection | None = None  # page history (mongo/history.py)
        self._keyed: Collection | None = None  # keyed items (mongo/keyed.py)
        self._spool = Spool(self.config.spool_path, self._parts.target)
        self._doc_limit = BSON_LIMIT
        self._write_lock = asyncio.Lock()
        self._mongo_lock = asyncio.Lock()
        self._kick = asyncio.Event()
        self._drained = asyncio.Event()
        self._replayer: asyncio.Task[None] | None = None
        self._spool_locked = False
        self.stored = 0
        self.duplicates = 0
        self.pages_added = 0

    def __repr__(self) -> str:
        return f"MongoStore({describe_store_uri(self.uri)!r})"

    # State for the master (backpressure) and for metrics.

    @property
    def spool_records(self) -> int:
        """Records acknowledged from the spool and not yet in MongoDB."""
        return self._spool.records

    @property
    def spool_bytes(self) -> int:
        """Compressed bytes those records take in the spool file."""
        return self._spool.bytes

    @property
    def spooling(self) -> bool:
        """True while batches go to the spool (MongoDB away or the spool draining)."""
        return self._spool.records > 0

    @property
    def backpressure(self) -> bool:
        """True while the spool is over `store.spool_max_bytes`: pause dispatch."""
        return self._spool.bytes > self.config.spool_max_bytes

    @property
    def dead_letters(self) -> int:
        """Records MongoDB refused for good, kept in the spool's dead_letters table."""
        return self._spool.dead_letters

    # Store protocol.

    async def open(self) -> None:
        if self._client is not None:
            return
        password = read_password(self.config)
        secrets = Secrets(self._parts.password, self._parts.raw_password, password)
        client = make_client(self.uri, self._parts, self.config, password, secrets)
        try:
            await self._connect(client, secrets)
            await self._open_existing_spool()
        except BaseException:
            await client.close()
            raise
        self._client = client
        try:
            if self._spool.records:
                log.info("mongo_spool_replay", records=self._spool.records, path=self._spool.path)
                await self._drain_at_open()
        except BaseException:
            await self.close()
            raise
        if self._spool.records:
            self._kick.set()
        else:
            self._drained.set()
        self._replayer = asyncio.create_task(self._replay_loop(), name="mongo-spool-replay")

    async def write(self, records: Sequence[PageRecord]) -> None:
        if not records:
            return
        async with self._write_lock:
            if self._spool.records:
                await self._to_spool(records)
                return
            try:
                retry, dead = await self._write_mongo(records)
            except PyMongoError as exc:
                await self._to_spool(records)
                # Logged once the batch is on disk: from here on it is acknowledged.
                log.warning("mongo_spooling", records=len(records), error=one_line(str(exc), 200))
                return
            if dead:
                await self._ready_spool()
                await self._spool.add_dead_letters(dead)
            if retry:
                await self._to_spool(retry, attempts=1)

    async def upsert_items(self, records: Sequence[PageRecord]) -> int:
        """Upsert the keyed items of `records` (store/items.py, mongo/keyed.py)."""
        return await upsert_mongo(self._coll(KEYED), records)

    async def iter_items(self, job: str | None = None) -> AsyncIterator[KeyedItem]:
        await self._wait_drained()
        async for item in read_keyed(self._coll(KEYED), job, repr(self)):
            yield item

    async def count(self, job: str | None = None) -> int:
        await self._wait_drained()
        try:
            return await self._coll(PAGES).count_documents({} if job is None else {"job": job})
        except PyMongoError as exc:
            raise StoreError(f"{self!r}: count failed: {one_line(str(exc))}") from exc

    async def iter_changes(
        self, job: str | None = None, since: float | None = None, chunk: int = CHANGE_ROWS
    ) -> AsyncIterator[dict[str, Any]]:
        """The field changes of revisited pages (history.diffs), by job, URL
        and time, `chunk` versions per query (mongo/history.py)."""
        async for change in read_changes(self._coll(CHANGES), job, since, chunk, repr(self)):
            yield change

    async def recent_changes(self, limit: int) -> list[dict[str, Any]]:
        """The latest changes of revisited pages, newest first (history.recent_mongo)."""
        return await recent_mongo(self._coll(CHANGES), limit)

    async def iter_records(
        self, job: str | None = None, since: float | None = None
    ) -> AsyncIterator[PageRecord]:
        await self._wait_drained()
        last: Document | None = None
        while True:
            try:
                pages, items = await read_chunk(
                    self._coll(PAGES), self._coll(ITEMS), job, last, self.CHUNK_ROWS, since
                )
            except PyMongoError as exc:
                raise StoreError(f"{self!r}: read failed: {one_line(str(exc))}") from exc
            for page in pages:
                yield record_from_document(page, items.get(owner_item(page)))
            if len(pages) < self.CHUNK_ROWS:
                return
            last = pages[-1]

    async def records_of(self, fps: Sequence[bytes]) -> list[PageRecord]:
        await self._wait_drained()
        try:
            pages, items = await read_by_ids(self._coll(PAGES), self._coll(ITEMS), list(fps))
        except PyMongoError as exc:
            raise StoreError(f"{self!r}: read failed: {one_line(str(exc))}") from exc
        return [record_from_document(page, items.get(owner_item(page))) for page in pages]

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is None:
            return
        try:
            if self._spool.records and self._replayer is not None:
                await self._wait_drained()
            if self._replayer is not None:
                self._replayer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._replayer
            if self._spool.records:
                log.warning(
                    "mongo_spool_left",
                    records=self._spool.records,
                    path=self._spool.path,
                    hint="replayed when this store opens again",
                )
        finally:
            await self._spool.close()
            await client.close()

    # Opening.

    async def _connect(self, client: AsyncMongoClient[Document], secrets: Secrets) -> None:
        try:
            db = client.get_default_database()
        except ConfigurationError:
            raise StoreError(
                f"MongoDB URI {describe_store_uri(self.uri)!r} names no database: "
                "expected mongodb://HOST:PORT/DBNAME"
            ) from None
        try:
            hello: dict[str, Any] = await client.admin.command("hello")
        except PyMongoError as exc:
            raise open_error(self.uri, exc, secrets) from None
        sharded = hello.get("msg") == "isdbgrid"
        replicated = sharded or "setName" in hello
        self._doc_limit = int(hello.get("maxBsonObjectSize", BSON_LIMIT))
        concern, note = write_concern(client, self.config, replicated)
        if note is not None:
            log.info("mongo_write_concern", note=note)
        self._pages = db.get_collection(PAGES, write_concern=concern)
        self._items = db.get_collection(ITEMS, write_concern=concern)
        self._changes = db.get_collection(CHANGES, write_concern=concern)
        self._keyed = db.get_collection(KEYED, write_concern=concern)
        try:
            await ensure_indexes(db, self.config.raw_retention_days, sharded)
        except PyMongoError as exc:
            raise StoreError(
                f"{self!r}: cannot create indexes: {one_line(secrets.redact(str(exc)))}"
            ) from None

    async def _drain_at_open(self) -> None:
        try:
            while self._spool.records:
                await self._replay_once()
        except PyMongoError as exc:
            # MongoDB went away again during the replay: the rest stays
            # spooled and the background task carries on.
            log.warning("mongo_replay_failed", error=one_line(str(exc), 200))

    # Writing.

    def _coll(self, name: str) -> Collection:
        collections = {PAGES: self._pages, ITEMS: self._items, KEYED: self._keyed}
        found = self._changes if name == CHANGES else collections[name]
        if found is None:
            raise StoreError(f"{self!r}: store is not open")
        return found

    async def _write_mongo(
        self, records: Sequence[PageRecord]
    ) -> tuple[list[PageRecord], list[DeadRecord]]:
        """Write to MongoDB; return the records to retry later and the dead letters."""
        # On a worker thread: compression, HTML parsing, BSON encoding.
        prepared, refused = await asyncio.to_thread(
            prepare_all, records, self.config.body_max_bytes, self._doc_limit
        )
        dead = [DeadRecord(record, error) for record, error in refused]
        pages, items = self._coll(PAGES), self._coll(ITEMS)
        async with self._mongo_lock:
            outcome = await write_pages(pages, items, last_per_fingerprint(prepared))
            if outcome.redo:
                again = await write_pages(pages, items, outcome.redo)
                outcome = merge_outcomes(outcome, again)
        self.stored += outcome.stored
        self.pages_added += outcome.added
        self.duplicates += outcome.duplicates
        failed = {id(p) for p in outcome.retry} | {id(p) for p, _ in outcome.dead}
        landed = [p.record for p in prepared if id(p) not in failed]
        if self._changes is not None:  # after the pages, before the batch is durable
            await append_mongo(self._changes, landed)
        await self.upsert_items(landed)
        dead += [DeadRecord(p.record, error) for p, error in outcome.dead]
        for letter in dead:
            log.error(
                "mongo_dead_letter",
                id=letter.record.fp.hex(),
                url=letter.record.url,
                error=letter.error,
            )
        for page in outcome.retry:
            log.warning("mongo_document_retry", id=page.record.fp.hex(), url=page.record.url)
        return [p.record for p in outcome.retry], dead
