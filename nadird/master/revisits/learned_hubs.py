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

Whether a URL is a learned hub, and its idle checks in a row, are kept in
its revisit row (a restart keeps both).
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
        entry.hub, entry.hub_idle = HUB_LEARNED, 0
        self.learned += 1
        return True

    def _checked(self, entry: Entry, spec: FeedsSpec, articles: int) -> bool:
        entry.hub_idle = 0 if articles > 0 else entry.hub_idle + 1
        if articles > 0 or entry.hub_idle < spec.forget:
            return False
        entry.hub, entry.hub_idle = 0, 0
        self.forgotten += 1
        return True
