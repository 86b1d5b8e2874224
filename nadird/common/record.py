"""The page record, declared once: every fact the crawler keeps about a page.

A page's fields are declared here and only here, each with a `Fact` in its
dataclass metadata that says how the other layers hold it. The wire message
(`protocol.messages.PageResult`) and the stored record (`store.base.PageRecord`)
inherit the fields; the codec, the master's conversion, the SQLite columns and
their migration, the MongoDB documents, the spool and the export all iterate
`dataclasses.fields`, so a field added here reaches every one of them.

The fields come in three parts because the two classes order them differently
and that order is visible: the export (JSON lines and CSV columns) lists the
record's fields in declaration order, with `job`, which only the record has
(a Results message carries it once for all its pages), right after
`fetched_at`. Dataclasses lay out base fields in reverse MRO order, so
`PageRecord(PageContent, RecordJob, PageFetch)` reads fetch, job, content.

Neither part is frozen: a dataclass must share its bases' frozenness, and the
stored record has always been mutable. The wire message is still never changed
after it is built (the worker uses `dataclasses.replace`).

To add a field: declare it in `PageContent` (before `data`, so that JSON
lines keep the extracted fields last) with a default, so that older messages,
spooled batches and stored rows still read, and with `since` = the next
SQLite schema version, so that older stores get the column.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from nadird.common.errors import ErrorKind

FACT = "nadird.fact"
# Field metadata: the codec leaves the field out of a message while it holds
# its default, so that what most pages never use (a request's method and
# meta, a bag's request specs) costs nothing on the wire.
SPARSE = "nadird.sparse"
SPARSE_FIELD: Mapping[str, bool] = {SPARSE: True}


class Cell(enum.Enum):
    """How a value is held outside Python (SQLite column; CSV and MongoDB
    where the kind matters)."""

    TEXT = "TEXT"
    INTEGER = "INTEGER"
    BLOB = "BLOB"
    BOOL = "BOOL"  # SQLite 0/1, CSV true/false
    JSON = "JSON"  # a list or mapping: SQLite JSON text, CSV one JSON cell
    TIME = "TIME"  # seconds since the epoch: SQLite REAL, MongoDB date, CSV ISO 8601
    ZLIB = "ZLIB"  # bytes kept compressed (SQLite BLOB of zlib)


class Mongo(enum.Enum):
    """Where MongoDB keeps a field."""

    PAGE = "page"  # a field of the `pages` document, under the same name
    ID = "id"  # the `pages` document's _id
    ITEM = "item"  # a field of the job's `items` document, under the same name
    BODY = "body"  # the page's compressed, size-capped body (mongo_docs handles it)


@dataclass(frozen=True, slots=True)
class Fact:
    cell: Cell
    export: bool  # part of `nadird export` (JSON lines and CSV)
    mongo: Mongo
    since: int  # the SQLite schema version whose table first had this column
    key: bool  # the SQLite primary key


def fact(
    cell: Cell,
    *,
    export: bool = True,
    mongo: Mongo = Mongo.PAGE,
    since: int = 1,
    key: bool = False,
    sparse: bool = False,
) -> Mapping[str, Any]:
    """Metadata for `dataclasses.field(metadata=...)`; `sparse`: see SPARSE."""
    declared: dict[str, Any] = {FACT: Fact(cell, export, mongo, since, key)}
    if sparse:
        declared[SPARSE] = True
    return declared


def fact_of(f: dataclasses.Field[Any]) -> Fact | None:
    found = f.metadata.get(FACT)
    return found if isinstance(found, Fact) else None


def facts(cls: type) -> tuple[tuple[dataclasses.Field[Any], Fact], ...]:
    """Every field of the dataclass `cls` with its Fact, in declaration order;
    a field without one (wire-only: links, elapsed, ...) is left out."""
    found = []
    for f in dataclasses.fields(cls):
        declared = fact_of(f)
        if declared is not None:
            found.append((f, declared))
    return tuple(found)


def has_default(f: dataclasses.Field[Any]) -> bool:
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


def default_of(f: dataclasses.Field[Any]) -> Any:
    """The value a field takes when a stored row or document lacks it."""
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    if f.default is not dataclasses.MISSING:
        return f.default
    raise LookupError(f"{f.name} has no default")


def stored_kind(name: str) -> ErrorKind:
    """A stored record's `error_kind` from the name a store or a spooled batch
    holds. Stored data is never refused: a name this nadird does not know
    reads as `unknown` (the wire, by contrast, refuses it)."""
    try:
        return ErrorKind(name)
    except ValueError:
        return ErrorKind.UNKNOWN


@dataclass
class PageFetch:
    """Which URL was fetched, and how that went."""

    __slots__ = ()

    url: str = field(metadata=fact(Cell.TEXT))
    fp: bytes = field(metadata=fact(Cell.BLOB, export=False, mongo=Mongo.ID, key=True))
    final_url: str = field(metadata=fact(Cell.TEXT))
    status: int = field(metadata=fact(Cell.INTEGER))
    fetched_at: float = field(metadata=fact(Cell.TIME))


@dataclass
class RecordJob:
    """The job a stored record belongs to (the wire names it per Results)."""

    __slots__ = ()

    job: str = field(metadata=fact(Cell.TEXT))


@dataclass
class PageContent:
    """What the page held and what was made of it."""

    __slots__ = ()

    depth: int = field(metadata=fact(Cell.INTEGER))
    content_type: str | None = field(default=None, metadata=fact(Cell.TEXT))
    checksum: str | None = field(default=None, metadata=fact(Cell.TEXT))
    body: bytes | None = field(
        default=None, metadata=fact(Cell.ZLIB, export=False, mongo=Mongo.BODY)
    )
    error: str | None = field(default=None, metadata=fact(Cell.TEXT))
    redirects: list[str] = field(default_factory=list, metadata=fact(Cell.JSON))
    # The page's <link rel=canonical>, canonicalized, when it names another URL.
    canonical: str | None = field(default=None, metadata=fact(Cell.TEXT, since=2))
    # Fields and links came from a browser's DOM (job render).
    rendered: bool = field(default=False, metadata=fact(Cell.BOOL, since=3))
    # Response headers named in fetch.store_headers, lower-case.
    headers: dict[str, str] = field(default_factory=dict, metadata=fact(Cell.JSON, since=4))
    # What kind of error `error` is (errors.ErrorKind). Not exported: the
    # export's `error` already reads "kind: detail", as it always has.
    error_kind: ErrorKind | None = field(
        default=None, metadata=fact(Cell.TEXT, export=False, since=5)
    )
    # What a revisit compares: a digest of the extracted fields, else of the
    # main text (worker/parse/signature.py); None when the job does not revisit.
    signature: str | None = field(default=None, metadata=fact(Cell.TEXT, export=False, since=6))
    # The item's business key (job item_key, items/keys.py); None for a job
    # without one, a page that is not an item, or an item whose key is missing.
    item_key: str | None = field(default=None, metadata=fact(Cell.TEXT, since=7))
    # The job that failed this URL and handed it to `job` (its on_failure).
    # Set by the master from the queue; a worker never knows it.
    fallback_from: str | None = field(default=None, metadata=fact(Cell.TEXT, since=7))
    # The request (nadird/job/request.py): its method, and the `meta` given with
    # it, kept as it was. A plain URL is a GET with no meta.
    method: str = field(default="GET", metadata=fact(Cell.TEXT, since=8, sparse=True))
    meta: dict[str, Any] = field(
        default_factory=dict, metadata=fact(Cell.JSON, since=8, sparse=True)
    )
    # An article's near-duplicate fingerprint (common/simhash.py): the
    # worker's, for the master's index; kept for `nadird reextract`.
    simhash: int | None = field(
        default=None, metadata=fact(Cell.INTEGER, export=False, since=9, sparse=True)
    )
    # The first URL of the job seen with a near-identical article text.
    near_duplicate_of: str | None = field(default=None, metadata=fact(Cell.TEXT, since=9))
    # The extracted fields; kept last (see the module docstring).
    data: dict[str, Any] = field(default_factory=dict, metadata=fact(Cell.JSON, mongo=Mongo.ITEM))
