"""What a feeds job's hub named of an article, until the article comes in
(job/feeds.py): the source that named it first, its stated publication
when it is timed, and what its feed or news sitemap entry stated (title,
publication and update dates: worker/feed_page.py).

When the article's own result comes in, each of `title`, `published` and
`modified` (the entry's `updated`) that the item lacks, or has empty, takes
the entry's value, and `_from_feed` names the fields filled so. The page's
own values always win.

What is named is kept in frontier.db (state/feed_db.py, behind EntryBook):
a restarted master still fills and times the articles named before it
stopped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

MAX_TITLE = 500  # characters of a stated title kept
FILLED = "_from_feed"
SOURCES = ("feed", "sitemap", "hub")  # what can name an article first ("link": none did)
# The item's field <- the entry's key (also Named's attribute).
FIELDS = (("title", "title"), ("published", "published"), ("modified", "updated"))


@dataclass(frozen=True, slots=True)
class Named:
    source: str  # one of SOURCES
    timed: float | None = None  # stated publication (epoch) when it counts for latency
    title: str = ""
    published: str = ""  # ISO 8601, as the entry stated it
    updated: str = ""

    @property
    def states(self) -> bool:
        """Whether the entry stated any field an item can take."""
        return bool(self.title or self.published or self.updated)

    def merged(self, later: Named) -> Named:
        """This naming, completed by a later one (a hub page named the
        article first, then its feed gave a date; the first that states
        fields keeps them)."""
        timed = self.timed if self.timed is not None else later.timed
        fields = self if self.states else later
        if timed == self.timed and fields is self:
            return self
        return replace(
            self,
            timed=timed,
            title=fields.title,
            published=fields.published,
            updated=fields.updated,
        )


def named_by_entry(source: str, timed: float | None, entry: dict[str, Any]) -> Named:
    def text(key: str, limit: int = 100) -> str:
        value = entry.get(key)
        return value[:limit] if isinstance(value, str) else ""

    title, published, updated = text("title", MAX_TITLE), text("published"), text("updated")
    return Named(source, timed, title, published, updated)


def fill(named: Named, data: dict[str, Any]) -> list[str]:
    """Fill the article's item `data` from its entry; returns the fields filled."""
    filled = []
    for field, key in FIELDS:
        value = getattr(named, key)
        if value and not data.get(field):
            data[field] = value
            filled.append(field)
    if filled:
        data[FILLED] = filled
    return filled


class EntryBook(Protocol):
    """Where the named articles and the watched feeds are kept (state/feed_db.py)."""

    def get_many(self, fps: Sequence[bytes]) -> dict[bytes, Named]: ...

    def put_many(self, rows: Sequence[tuple[bytes, Named]], now: float) -> None:
        """Insert or replace."""

    def take(self, fp: bytes) -> Named | None:
        """The article's naming, forgotten once read (its article came in)."""

    def watched_since(self, fp: bytes, now: float) -> float:
        """When the feed `fp` was first read (now, the first time)."""
