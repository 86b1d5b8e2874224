"""A feeds job's pages on the master: which are hubs by what they answered
(a feed or sitemap at any address) or found, and when an article is
checked again (`recheck`).

Hubs learned from what pages find: a page that keeps naming
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

from nadird.job.feeds import (
    FeedsSpec,
    is_article,
    is_hub,
    is_listing,
    page_number,
    recheck_after,
)
from nadird.job.spec import Job
from nadird.master.state.revisit_db import HUB_FEED, HUB_LEARNED, Entry
from nadird.protocol.messages import PageResult

MAX_TRACKED = 100_000  # learned hubs whose idle checks are counted


def hub_kind(page: PageResult, prev: Entry | None, unchanged: bool) -> int:
    """HUB_FEED when the worker read the page as a feed or sitemap
    (worker/feed_page.py); else what it was, unless it was a feed no more
    (a 304 keeps it; learned hubs are learned_hubs.py's)."""
    if page.data and isinstance(page.data.get("_feed"), dict):
        return HUB_FEED
    kind = prev.hub if prev is not None else 0
    return kind if unchanged or kind == HUB_LEARNED else 0


def recheck_due(job: Job, spec: FeedsSpec, entry: Entry) -> float | None:
    """When a feeds job's article is fetched again for corrections: once,
    `recheck` after its first fetch (job/feeds.py); None: not again (and
    never for hubs, listing or archive pages)."""
    after = recheck_after(spec)
    if after is None or entry.hub or entry.checks > 0:
        return None
    if not is_article(entry.url, is_listing(entry.url, job.hub_patterns)):
        return None
    return entry.last_fetch + after


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
