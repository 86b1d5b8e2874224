"""PageRecord <-> MongoDB documents: the `pages` (raw) and `items` schema.

Pure functions, no I/O: `prepare` runs on a worker thread (zlib, lxml and BSON
encoding are CPU work the event loop should not do), `record_from_document`
turns the two documents back into the record `nadird export` prints.

A document never exceeds the server's BSON limit: the body is cut until it
fits and the page is flagged `body_truncated`; an item whose extracted data
alone is too big keeps its place with empty `data` and `data_truncated`.
Nothing is dropped and nothing fails the batch for being large.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import bson
import bson.errors

from nadird.common.record import Cell, Mongo, default_of, facts, has_default
from nadird.common.textfp import text_fingerprint
from nadird.store.base import PageRecord, kind_from_text

PAGES = "pages"
ITEMS = "items"

BSON_LIMIT = 16 * 1024 * 1024
# An upsert sends {q: {_id}, u: doc, upsert: true}; MongoDB allows 16 KiB on
# top of the document limit for that envelope, so the document itself must
# stay under the limit with a little room for the binary field's own header.
_FIELD_OVERHEAD = 64
_ZLIB_LEVEL = 6
# Each retry aims a bit below the room left, since compression is not linear.
_AIM = 0.9

Document = dict[str, Any]

# Where each record field goes (nadird.common.record): `_id`, a field of the page
# document under its own name (a time as a BSON date), a field of the item,
# or the body, which _attach_body compresses and caps.
_FACTS = facts(PageRecord)
PAGE_FIELDS = tuple(f.name for f, declared in _FACTS if declared.mongo is Mongo.PAGE)
_ITEM = tuple((f, declared) for f, declared in _FACTS if declared.mongo is Mongo.ITEM)
ITEM_FIELDS = tuple(f.name for f, _ in _ITEM)
_DATES = frozenset(f.name for f, declared in _FACTS if declared.cell is Cell.TIME)
_page_values = attrgetter(*PAGE_FIELDS)


@dataclass
class PreparedPage:
    """One record as MongoDB documents, before content deduplication."""

    record: PageRecord
    page: Document
    item: Document | None
    text_fp: bytes | None


def item_id(fp: bytes, job: str) -> bytes:
    # The fingerprint has a fixed length (16 bytes), so fp + job is unambiguous.
    return fp + job.encode("utf-8")


def to_datetime(ts: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts, tz=dt.UTC)


def prepare(
    record: PageRecord, body_max_bytes: int, doc_limit: int, now: dt.datetime
) -> PreparedPage:
    """Build the page document and (if the page has content) its item.

    Raises bson.errors.InvalidDocument (or OverflowError) when a field cannot
    be encoded at all: the caller dead-letters that one record.
    """
    text_fp = text_fingerprint(record.content_type, record.body)
    page = _page_document(record, text_fp)
    _attach_body(page, record.body, body_max_bytes, doc_limit)
    item = None
    if record.error is None and (record.data or text_fp is not None):
        item = _item_document(record, text_fp, now, doc_limit)
    return PreparedPage(record, page, item, text_fp)


def prepare_all(
    records: Sequence[PageRecord], body_max_bytes: int, doc_limit: int
) -> tuple[list[PreparedPage], list[tuple[PageRecord, str]]]:
    """`prepare` for a batch: the prepared pages, and the records that
    cannot be encoded at all (to dead-letter) with why."""
    now = dt.datetime.now(dt.UTC)
    prepared: list[PreparedPage] = []
    refused: list[tuple[PageRecord, str]] = []
    for record in records:
        try:
            prepared.append(prepare(record, body_max_bytes, doc_limit, now))
        except (bson.errors.InvalidDocument, OverflowError, ValueError, TypeError) as exc:
            refused.append((record, f"cannot encode: {exc}"))
    return prepared, refused


def _page_document(record: PageRecord, text_fp: bytes | None) -> Document:
    page: Document = {"_id": record.fp}
    for name, value in zip(PAGE_FIELDS, _page_values(record), strict=True):
        page[name] = to_datetime(value) if name in _DATES else value
    page["text_fp"] = text_fp
    page["body_bytes"] = None if record.body is None else len(record.body)
    page["body_truncated"] = False
    return page


def _attach_body(page: Document, body: bytes | None, body_max_bytes: int, limit: int) -> None:
    if body is None:
        return
    room = limit - len(bson.encode(page)) - _FIELD_OVERHEAD
    compressed, kept = fit_compressed(body[:body_max_bytes], room)
    if compressed is not None:
        page["body"] = compressed
    page["body_truncated"] = kept < len(body)


def fit_compressed(raw: bytes, room: int) -> tuple[bytes | None, int]:
    """zlib of the longest prefix of `raw` found that compresses to <= room bytes,
    and the length of that prefix (0 and None when nothing fits)."""
    if room <= 0:
        return None, 0
    keep = len(raw)
    compressed = zlib.compress(raw, _ZLIB_LEVEL)
    while len(compressed) > room:
        keep = int(keep * _AIM * room / len(compressed))
        if keep <= 0:
            return None, 0
        compressed = zlib.compress(raw[:keep], _ZLIB_LEVEL)
    return compressed, keep


def drop_body(page: Document) -> None:
    """Last resort when the server still finds the page too large."""
    page.pop("body", None)
    page["body_truncated"] = True


def _item_document(
    record: PageRecord, text_fp: bytes | None, now: dt.datetime, limit: int
) -> Document:
    item: Document = {
        "_id": item_id(record.fp, record.job),
        "job": record.job,
        "page_id": record.fp,
        "source_url": record.url,
        "text_fp": text_fp,
        "fetched_at": to_datetime(record.fetched_at),
        "updated_at": now,
    }
    for name in ITEM_FIELDS:
        item[name] = getattr(record, name)
    item["data_truncated"] = False
    if len(bson.encode(item)) > limit:
        # The extracted data alone is too big: the item keeps its place, empty.
        for f, _ in _ITEM:
            item[f.name] = default_of(f)
        item["data_truncated"] = True
    return item


def record_from_document(page: Document, item: Document | None) -> PageRecord:
    """The stored page (and the fields of its item) as the record export prints."""
    fields_of = {Mongo.PAGE: page, Mongo.ITEM: item or {}}
    values = []
    for name, place, required, default, is_time in _READ_PLAN:
        if place is Mongo.ID:
            value: Any = bytes(page["_id"])
        elif place is Mongo.BODY:
            body = page.get(name)
            value = None if body is None else zlib.decompress(body)
        else:
            doc = fields_of[place]
            value = doc[name] if required else doc.get(name)
            if value is None:
                value = None if default is None else default()
            elif is_time:
                value = _timestamp(value)
        values.append(value)
    record = PageRecord(*values)
    return record if "error_kind" in page else kind_from_text(record)


def _timestamp(moment: dt.datetime) -> float:
    if moment.tzinfo is None:  # a client without tz_aware: BSON dates are UTC
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()


def _default(f: dataclasses.Field[Any]) -> Callable[[], Any] | None:
    """What a document without the field gives (None: None, or a required field)."""
    if not has_default(f) or f.default is None:
        return None
    return functools.partial(default_of, f)


# (name, place, required, default, is a time) per record field, in order.
_READ_PLAN = tuple(
    (f.name, declared.mongo, not has_default(f), _default(f), declared.cell is Cell.TIME)
    for f, declared in _FACTS
)
