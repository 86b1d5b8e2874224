"""Pages read back for re-extraction, and their updates (`nadird reextract`).

Each store reads a job's pages in its own key order, a chunk at a time, and
writes a chunk's updates in one call, `update_page_data`: the one place an
item changes after its fetch, so whatever else must follow an item (its
history, a keyed copy) follows it there. An update names the fetch it was
made from (`guard`, the fetch time as the store holds it) and is applied
only while that fetch is still the stored one: a page the master stored
again meanwhile keeps the newer data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from nadird.store.base import PageRecord

# Why a stored page could not be read as a record (a report's `skipped` keys).
UNREADABLE = "unreadable"  # a row or document of another shape (older release, damage)
CORRUPT_BODY = "corrupt_body"  # the compressed body does not decompress
DUPLICATE = "duplicate"  # MongoDB: the content's item belongs to another page
NO_ITEM = "no_item"  # MongoDB: no item to update
WRITE_FAILED = "write_failed"  # the store refused the update


def readable(record: PageRecord) -> bool:
    """Whether a decoded row or document has the shapes re-extraction reads."""
    return (
        isinstance(record.data, dict)
        and isinstance(record.final_url, str)
        and isinstance(record.status, int)
        and isinstance(record.fetched_at, int | float)
        and (record.body is None or isinstance(record.body, bytes))
    )


@dataclass(slots=True)
class StoredPage:
    """One page as read, or the reason it could not be."""

    key: str  # the store's order (SQLite rowid, MongoDB _id in hex): where a resumed run goes on
    guard: Any  # the fetch time as stored: an update applies only while it still matches
    record: PageRecord | None
    reason: str | None = None  # why the page is skipped without being parsed


@dataclass(frozen=True, slots=True)
class PageUpdate:
    page: StoredPage
    record: PageRecord  # the page with its new data and signature


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Where a run is, saved with the chunk it follows (None: the run is over)."""

    name: str
    value: dict[str, Any] | None


@dataclass(slots=True)
class UpdateOutcome:
    landed: list[str] = field(default_factory=list)  # the keys of the pages updated
    refetched: int = 0  # stored again by the master since they were read: left alone
    failed: int = 0  # refused by the store (e.g. a document over its size limit)
    versions: int = 0  # history versions appended


# The checkpoint to save with a chunk, made from what its updates did, so
# that the counts it carries are the ones the store applied.
CheckpointOf = Callable[[UpdateOutcome], Checkpoint]


@runtime_checkable
class PageStore(Protocol):
    """What `nadird reextract` needs of a store, beyond `open` and `close`."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def read_pages(
        self, job: str, after: str | None, since: float | None, limit: int
    ) -> list[StoredPage]:
        """Up to `limit` pages of `job` after key `after`, fetched at or after `since`."""

    async def update_page_data(
        self, updates: Sequence[PageUpdate], checkpoint: CheckpointOf | None = None
    ) -> UpdateOutcome:
        """Store the new data and signatures (history versions when the
        signature changed), then the checkpoint `checkpoint` makes of the
        outcome (SQLite: in the same transaction)."""

    async def load_checkpoint(self, name: str) -> dict[str, Any] | None: ...
