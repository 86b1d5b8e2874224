"""What of a page result the master makes again instead of taking it from
the worker: the item's key, and a fetch time no later than the master's clock.

An item's key as the master makes it, not as a worker says.

A keyed item (items/keys.py) is upserted under its key: a worker's key taken
as sent would let an out-of-date or hostile worker file a page's fields over
any other item of the job. The master has the job, so it makes the key again
from the page's URL and fields. Where the worker's differs, the page keeps
the master's key but is marked invalid with why (as an item whose key cannot
be made is), so it is counted and never upserted: a worker that disagrees
with the master about keys changes no keyed item.

A key made of fields can only be as true as the fields: the master did not
fetch the page. A `url_regex` key follows from the leased URL alone.

A fetch time decides which fetch of a keyed item is the latest (and when a
page is due again): one in the future would keep a worker's version over
every later fetch. A time later than the master's clock allows for (plus
MAX_CLOCK_SKEW) becomes the master's clock.
"""

from __future__ import annotations

import math
from collections import Counter

from nadird.items.keys import KeyRule, UrlKey, compile_key, key_of, mark_invalid
from nadird.jobs import Job
from nadird.protocol.messages import PageResult

MAX_CLOCK_SKEW = 300.0  # seconds a worker's clock may be ahead of the master's


class PageClaims:
    def __init__(self, stats: Counter[str]) -> None:
        self.stats = stats  # the master's: rejected_item_keys, future_fetch_times
        # job name -> (its item_key setting, the compiled rule): compiled again on a reload.
        self._rules: dict[str, tuple[list[str] | UrlKey | None, KeyRule | None]] = {}

    def check(self, job: Job | None, page: PageResult, wall: float) -> None:
        """Make the page's key and bound its fetch time (`wall`: the master's clock)."""
        if not page.fetched_at <= wall + MAX_CLOCK_SKEW or math.isinf(page.fetched_at):
            page.fetched_at = wall  # in the future, or NaN
            self.stats["future_fetch_times"] += 1
        if not self.key(job, page):
            self.stats["rejected_item_keys"] += 1

    def key(self, job: Job | None, page: PageResult) -> bool:
        """Give the page the master's key; False (the page marked invalid)
        when the worker's was another. A deleted job keys nothing."""
        rule = self._rule(job) if job is not None else None
        if rule is None and page.item_key is None:
            return True  # the common case: a job without item_key
        key, reason = key_of(rule, page.url, page.final_url, page.data)
        claimed, page.item_key = page.item_key, key
        if key == claimed:
            return True
        made = f"the item's key is {key!r:.100}" if reason is None else reason
        mark_invalid(page.data, f"the worker sent key {claimed!r:.100}, but {made}")
        return False

    def _rule(self, job: Job) -> KeyRule | None:
        setting = job.item_key
        found = self._rules.get(job.name)
        if found is not None and found[0] is setting:
            return found[1]
        rule = compile_key(setting)
        self._rules[job.name] = (setting, rule)
        return rule
