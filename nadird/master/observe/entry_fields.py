"""What a feed or news sitemap stated of an article, filled into the
article's item where the page itself states nothing (job/feeds.py).

A feed entry gives a title, a publication date and an update date
(worker/feed_page.py). They are remembered by the article's fingerprint (a
bounded map, oldest forgotten first, like discovery.py's) until the
article's own result comes in; then each of `title`, `published` and
`modified` (the entry's `updated`) that the item lacks, or has empty, takes
the entry's value, and `_from_feed` names the fields filled so. The page's
own values always win. Kept in memory: a restarted master fills only from
entries it read since.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

MAX_REMEMBERED = 200_000  # entries remembered until their article comes in
MAX_TITLE = 500  # characters of a stated title kept
FILLED = "_from_feed"
# The item's field <- the entry's key.
FIELDS = (("title", "title"), ("published", "published"), ("modified", "updated"))


class EntryFields:
    def __init__(self, limit: int = MAX_REMEMBERED) -> None:
        self._stated: OrderedDict[bytes, tuple[tuple[str, str], ...]] = OrderedDict()
        self._limit = limit
        self.filled = 0  # articles given at least one field (this run)

    def remember(self, fp: bytes, entry: dict[str, Any]) -> None:
        """Keep what the entry of the article `fp` stated (the first entry
        that states anything wins: a feed and a sitemap may both list it)."""
        if fp in self._stated:
            return
        stated = tuple(
            (field, value[:MAX_TITLE])
            for field, key in FIELDS
            if isinstance(value := entry.get(key), str) and value
        )
        if not stated:
            return
        self._stated[fp] = stated
        if len(self._stated) > self._limit:
            self._stated.popitem(last=False)

    def fill(self, fp: bytes, data: dict[str, Any]) -> list[str]:
        """Fill the article's item `data` from its entry; returns the fields filled."""
        stated = self._stated.pop(fp, ())
        filled = [field for field, value in stated if not data.get(field)]
        if filled:
            values = dict(stated)
            for field in filled:
                data[field] = values[field]
            data[FILLED] = filled
            self.filled += 1
        return filled
