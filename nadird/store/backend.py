"""What every store backend does (sqlite/, mongo/): the master writes through
it, `nadird export` and `nadird reextract` read through it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol, runtime_checkable

from nadird.store.base import PageRecord
from nadird.store.items import KeyedItem


class Store(Protocol):
    async def open(self) -> None: ...

    async def write(self, records: Sequence[PageRecord]) -> None:
        """Upsert by fingerprint; durable when it returns."""

    async def upsert_items(self, records: Sequence[PageRecord]) -> int:
        """Upsert the keyed items of `records` (store/items.py); `write` does
        it for what it writes. Returns how many items the records held."""

    def iter_items(self, job: str | None = None) -> AsyncIterator[KeyedItem]: ...

    async def count(self, job: str | None = None) -> int: ...

    def iter_records(
        self, job: str | None = None, since: float | None = None
    ) -> AsyncIterator[PageRecord]:
        """The stored records (of one job); with `since`, only those
        fetched at or after it (epoch seconds), oldest first, found through
        an index on the fetch time."""

    async def close(self) -> None: ...

    # What the master watches besides writes. A backend without an outage
    # spool answers 0 and False.

    @property
    def pages_added(self) -> int:
        """Pages this process added to the store since it opened it: writes
        of a fingerprint the store did not hold (a page written again is not
        one; a spooled record counts once it reaches the store)."""

    @property
    def spool_records(self) -> int:
        """Records acknowledged (durable in a local spool) but not yet in the store."""

    @property
    def backpressure(self) -> bool:
        """True while the store asks for no new work (its spool is over its cap)."""


@runtime_checkable
class ReadsByFingerprint(Protocol):
    """A store that reads pages back by fingerprint (both backends do; a
    wrapper around one need not)."""

    async def records_of(self, fps: Sequence[bytes]) -> list[PageRecord]:
        """The stored records of these pages (those stored), without their
        bodies: what a restarted master compares its own state with."""
