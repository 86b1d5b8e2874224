"""Write one batch of prepared pages to MongoDB: dedup, two bulk upserts, triage.

Round trips per batch, whatever its size: one find for content dedup, one
unordered bulk_write on `pages`, one on `items`, and one more on each for the
documents that already existed (re-fetches, replays). Writes are upserts
keyed by the URL fingerprint, so writing a batch twice (a replay after an
outage, a late result) leaves the same documents.

Errors of the whole call (network, server selection, write concern not
satisfied) propagate as PyMongoError: the caller spools the batch. Errors of
single documents are sorted here: a duplicate key (on the fingerprint or the
URL) means the page is already stored, as on a replay: success; a page the
server still finds too large is redone without its body; transient codes are
retried later; anything else is dead-lettered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pymongo import DeleteOne, InsertOne, ReplaceOne
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import BulkWriteError

from nadird.store.mongo.docs import Document, PreparedPage, drop_body, item_id

DUPLICATE_KEY = 11000
# Server codes meaning "try again later", as they can appear per document.
TRANSIENT_CODES = frozenset(
    {6, 7, 50, 64, 89, 91, 112, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436}
)
# BSONObjectTooLarge and "document to insert/upsert is larger than ...".
TOO_LARGE_CODES = frozenset({10334, 17419, 17420})

Collection = AsyncCollection[Document]
_DedupKey = tuple[str, bytes]


@dataclass
class BatchOutcome:
    stored: int = 0
    added: int = 0  # pages inserted: their fingerprint was not stored yet
    duplicates: int = 0
    redo: list[PreparedPage] = field(default_factory=list)
    retry: list[PreparedPage] = field(default_factory=list)
    dead: list[tuple[PreparedPage, str]] = field(default_factory=list)


def last_per_fingerprint(prepared: Sequence[PreparedPage]) -> list[PreparedPage]:
    """One page per fingerprint, the last one given.

    An unordered bulk may apply two upserts of one _id in either order; the
    SQLite store applies them in order, so the later result wins there too.
    """
    latest = {p.record.fp: p for p in prepared}
    return list(latest.values())


async def mark_duplicates(items: Collection, prepared: Sequence[PreparedPage]) -> int:
    """Set `duplicate_of` on pages whose text is already stored for their job.

    The first page with a given (job, text fingerprint) owns the item; later
    pages point at it (`duplicate_of` = its page _id) and get no item. A page
    that owns an item already keeps it on replay.
    """
    candidates = [p for p in prepared if p.item is not None and p.text_fp is not None]
    if not candidates:
        return 0
    owners = await _stored_owners(items, candidates)
    duplicates = 0
    for page in candidates:
        key: _DedupKey = (page.record.job, page.text_fp or b"")
        owner = owners.setdefault(key, page.record.fp)
        if owner != page.record.fp:
            page.page["duplicate_of"] = owner
            page.item = None
            duplicates += 1
    return duplicates


async def _stored_owners(
    items: Collection, candidates: Sequence[PreparedPage]
) -> dict[_DedupKey, bytes]:
    by_job: dict[str, set[bytes]] = {}
    for page in candidates:
        by_job.setdefault(page.record.job, set()).add(page.text_fp or b"")
    owners: dict[_DedupKey, bytes] = {}
    # One query per job in the batch (nearly always one): an equality on job
    # keeps every server on the (job, text_fp) index, where `job: {$in}` may not.
    for job, fps in by_job.items():
        query = {"job": job, "text_fp": {"$in": list(fps)}}
        async for doc in items.find(query, {"text_fp": 1, "page_id": 1}):
            owners[(job, bytes(doc["text_fp"]))] = bytes(doc["page_id"])
    return owners


async def write_pages(
    pages: Collection, items: Collection, prepared: Sequence[PreparedPage]
) -> BatchOutcome:
    outcome = BatchOutcome()
    outcome.duplicates = await mark_duplicates(items, prepared)
    page_docs = [(p.page, p) for p in prepared]
    failed = await _upsert(pages, page_docs, [], outcome, items_collection=False)
    landed = [p for p in prepared if id(p) not in failed]
    item_docs: list[tuple[Document, PreparedPage]] = []
    deletes: list[tuple[DeleteOne, PreparedPage]] = []
    for page in landed:
        if page.item is not None:
            item_docs.append((page.item, page))
        elif "duplicate_of" in page.page:
            # A page that owned an item before and is now a duplicate: its old
            # item would otherwise remain as a second copy of the content.
            delete = DeleteOne({"_id": item_id(page.record.fp, page.record.job)})
            deletes.append((delete, page))
    failed_items = await _upsert(items, item_docs, deletes, outcome, items_collection=True)
    outcome.stored = len(landed) - len(failed_items)
    return outcome


async def _upsert(
    collection: Collection,
    docs: Sequence[tuple[Document, PreparedPage]],
    extra: Sequence[tuple[Any, PreparedPage]],
    outcome: BatchOutcome,
    items_collection: bool,
) -> set[int]:
    """Upsert `docs` by _id (and run `extra` ops); return id()s of pages that failed.

    Insert first, replace what already exists: most pages of a crawl are new,
    and servers take a batch of inserts much faster than a batch of upserts
    (SecantusDB by 20x and more), while the result is the same. A duplicate
    _id is an existing document, replaced in a second unordered bulk.
    """
    ops: list[tuple[Any, PreparedPage]] = [(InsertOne(doc), page) for doc, page in docs]
    ops += extra
    errors = await _bulk(collection, [op for op, _page in ops])
    if not items_collection:  # an insert without an error is a page new to the store
        outcome.added += len(docs) - sum(1 for e in errors if int(e["index"]) < len(docs))
    existing = [e for e in errors if _is_existing_id(e)]
    failed = _triage([e for e in errors if not _is_existing_id(e)], ops, outcome, items_collection)
    if existing:
        again = [docs[int(e["index"])] for e in existing]
        replaces = [(ReplaceOne({"_id": doc["_id"]}, doc, upsert=True), p) for doc, p in again]
        errors = await _bulk(collection, [op for op, _page in replaces])
        failed |= _triage(errors, replaces, outcome, items_collection)
    return failed


async def _bulk(collection: Collection, ops: list[Any]) -> list[dict[str, Any]]:
    """Run one unordered bulk; return its per-document errors."""
    if not ops:
        return []
    try:
        await collection.bulk_write(ops, ordered=False)
    except BulkWriteError as exc:
        details: Any = exc.details
        if details.get("writeConcernErrors"):
            # Applied but not (known to be) durable: retry the whole batch.
            raise
        errors: list[dict[str, Any]] = details.get("writeErrors", [])
        return errors
    return []


def _is_existing_id(error: dict[str, Any]) -> bool:
    if int(error.get("code", 0)) != DUPLICATE_KEY:
        return False
    pattern = error.get("keyPattern")
    if pattern is not None:
        # A page's _id is its URL's fingerprint, so a page already stored may
        # be reported on either unique index (SecantusDB names `url` first).
        return list(pattern) in (["_id"], ["url"])
    return " _id_ " in str(error.get("errmsg", ""))  # servers without keyPattern


def _triage(
    errors: list[dict[str, Any]],
    ops: Sequence[tuple[Any, PreparedPage]],
    outcome: BatchOutcome,
    items_collection: bool,
) -> set[int]:
    failed: set[int] = set()
    for error in errors:
        code = int(error.get("code", 0))
        page = ops[int(error["index"])][1]
        if code == DUPLICATE_KEY:
            continue  # the URL (or item) is already stored: a replay
        failed.add(id(page))
        if code in TOO_LARGE_CODES and not items_collection:
            drop_body(page.page)
            outcome.redo.append(page)
        elif code in TRANSIENT_CODES:
            outcome.retry.append(page)
        else:
            outcome.dead.append((page, f"{code}: {error.get('errmsg', '')}"))
    return failed


def merge_outcomes(first: BatchOutcome, second: BatchOutcome) -> BatchOutcome:
    # Whatever the second pass could not settle either is retried later.
    return BatchOutcome(
        stored=first.stored + second.stored,
        added=first.added + second.added,
        duplicates=first.duplicates + second.duplicates,
        redo=[],
        retry=first.retry + second.retry + second.redo,
        dead=first.dead + second.dead,
    )
