"""Scripts and stylesheets kept across rendered pages, per worker.

Each page renders in a fresh browser context, so Chromium's own cache is
empty every time and every page of a site would ask again for the same
scripts: several requests per page that a browser would not make. Keeping
them here (bounded in bytes, for a fixed time: the fetcher does not keep
Cache-Control) saves the site those requests and the domain's pace that time.

Only what never varies by page is kept: scripts and stylesheets answered
200. What was refused (third party, robots) is refused before the cache is
looked at, so a cached answer never bypasses a rule.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from nadird.worker.render.exchange import Fulfil

CACHED_TYPES = frozenset({"script", "stylesheet"})


class SubresourceCache:
    def __init__(self, max_bytes: int, ttl: float) -> None:
        self.max_bytes = max_bytes
        self.ttl = ttl
        self.hits = 0
        self._size = 0
        self._entries: OrderedDict[str, tuple[float, Fulfil]] = OrderedDict()

    def get(self, url: str, resource_type: str) -> Fulfil | None:
        if resource_type not in CACHED_TYPES:
            return None
        entry = self._entries.get(url)
        if entry is None:
            return None
        expires, reply = entry
        if expires <= time.monotonic():
            self._drop(url)
            return None
        self._entries.move_to_end(url)
        self.hits += 1
        return reply

    def put(self, url: str, resource_type: str, reply: Fulfil) -> None:
        size = len(reply.body)
        if not self.max_bytes:
            return
        if resource_type not in CACHED_TYPES or reply.status != 200 or size > self.max_bytes // 4:
            return  # one large file must not empty the whole cache
        self._drop(url)
        self._entries[url] = (time.monotonic() + self.ttl, reply)
        self._size += size
        while self._size > self.max_bytes:
            oldest = next(iter(self._entries))
            self._drop(oldest)

    def _drop(self, url: str) -> None:
        entry = self._entries.pop(url, None)
        if entry is not None:
            self._size -= len(entry[1].body)
