"""Hubs learned from what pages find: a feeds job's page that keeps naming
new articles (a section front, a "latest" page) is checked like a feed.

A page whose fetch found at least `learn` new article links (job/feeds.py:
neither feeds, listings nor archive pages) is made a hub: it follows the
hubs' adaptive schedule from then on. A hub made so that finds no new
article on `forget` checks in a row (a 304 included) is a page again: its
schedule is the job's own (by default none, fetched once). Feeds and
sitemaps (by what they answered) and the job's `hubs` (by URL) are hubs
anyway and are left alone; archive pages are never made hubs.

Whether a URL is a learned hub is kept in its revisit row (a restart keeps
it); the count of idle checks in a row is this process's (a restart gives a
hub `forget` more checks).
"""

from __future__ import annotations

from nadird.job.feeds import FeedsSpec, is_hub, page_number
from nadird.master.state.revisit_db import HUB_LEARNED, Entry

MAX_TRACKED = 100_000  # learned hubs whose idle checks are counted


class LearnedHubs:
    def __init__(self) -> None:
        self._idle: dict[bytes, int] = {}  # learned hub fp -> idle checks in a row
        self.learned = 0  # pages made hubs (this run)
        self.forgotten = 0  # learned hubs made pages again (this run)

    def found(self, entry: Entry, spec: FeedsSpec, articles: int) -> bool:
        """Note that a fetch of `entry` found `articles` new article links;
        True when it became or stopped being a learned hub."""
        if entry.hub == HUB_LEARNED:
            return self._checked(entry, spec, articles)
        if entry.hub or not spec.learn or articles < spec.learn:
            return False
        if is_hub(entry.url, spec) or page_number(entry.url) is not None:
            return False
        entry.hub = HUB_LEARNED
        if len(self._idle) < MAX_TRACKED:
            self._idle[entry.fp] = 0
        self.learned += 1
        return True

    def _checked(self, entry: Entry, spec: FeedsSpec, articles: int) -> bool:
        if articles > 0:
            self._idle[entry.fp] = 0
            return False
        idle = self._idle.get(entry.fp, 0) + 1
        if idle < spec.forget:
            if idle == 1 and len(self._idle) >= MAX_TRACKED:
                return False  # too many to count: kept a hub
            self._idle[entry.fp] = idle
            return False
        self._idle.pop(entry.fp, None)
        entry.hub = 0
        self.forgotten += 1
        return True
