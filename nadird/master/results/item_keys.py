"""An item's key as the master makes it, not as a worker says.

A keyed item (items/keys.py) is upserted under its key: a worker's key taken
as sent would let an out-of-date or hostile worker file a page's fields over
any other item of the job. The master has the job, so it makes the key again
from the page's URL and fields. Where the worker's differs, the page keeps
the master's key but is marked invalid with why (as an item whose key cannot
be made is), so it is counted and never upserted: a worker that disagrees
with the master about keys changes no keyed item.

A key made of fields can only be as true as the fields: the master did not
fetch the page. A `url_regex` key follows from the leased URL alone.
"""

from __future__ import annotations

from nadird.items.keys import KeyRule, UrlKey, compile_key, key_of, mark_invalid
from nadird.jobs import Job
from nadird.protocol.messages import PageResult


class ItemKeys:
    def __init__(self) -> None:
        # job name -> (its item_key setting, the compiled rule): compiled again on a reload.
        self._rules: dict[str, tuple[list[str] | UrlKey | None, KeyRule | None]] = {}

    def check(self, job: Job | None, page: PageResult) -> bool:
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
