"""What of a worker's word the master makes again or bounds instead of
taking it as sent: an item's key, a fetch time, a bag's wait, robots notes.
(Links: frontier/link_check.py; pages and depths: leasing/acceptance.py.)

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
import time
from collections import Counter

from nadird.common.logs import PerKeyLimit, get_logger
from nadird.config import ThrottleConfig
from nadird.items.keys import KeyRule, UrlKey, compile_key, key_of, mark_invalid
from nadird.job.spec import Job
from nadird.master.leasing.robots_notes import of_domain
from nadird.protocol.messages import PageResult, RobotsNote

log = get_logger()

MAX_CLOCK_SKEW = 300.0  # seconds a worker's clock may be ahead of the master's
LOG_INTERVAL = 60.0  # seconds between two lines for one worker and claim


class Claims:
    def __init__(self, stats: Counter[str]) -> None:
        self.stats = stats  # the master's: rejected_item_keys, future_fetch_times...
        self._log = PerKeyLimit(LOG_INTERVAL)
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

    def rest(self, wait: float, worker: str, throttle: ThrottleConfig) -> float:
        """A bag's rest for its domain, in seconds from now (see the module docstring)."""
        longest = max(throttle.max_retry_after, throttle.max_crawl_delay, throttle.max_delay)
        if not wait > 0:  # NaN too
            return 0.0
        if wait <= longest:
            return wait
        self.stats["waits_capped"] += 1
        suppressed = self._log.allow(f"{worker}\0wait", time.monotonic())
        if suppressed is not None:
            log.warning("wait_capped", worker=worker, wait=wait, taken=longest)
        return longest

    def robots(self, notes: list[RobotsNote], domain: str) -> list[RobotsNote]:
        kept = of_domain(notes, domain)
        self.stats["robots_notes_refused"] += len(notes) - len(kept)
        return kept
