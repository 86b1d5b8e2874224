"""The registrable domain of a URL, memoized by its host part.

Every new link the master admits needs its domain (the frontier's queues are
per domain). `urls.domain_of` parses the whole URL first, which costs more
than everything else the master does with the link; the links of one page
share a handful of hosts, so the answer is kept per netloc.
"""

from __future__ import annotations

import re

from nadird.common.urls import domain_of

# For a URL that starts exactly like this, urlsplit's netloc is this group
# (up to the first / ? or #), so the cached domain is a function of the key.
_NETLOC = re.compile(r"https?://([^/?#]*)")


class DomainCache:
    def __init__(self, max_entries: int = 100_000) -> None:
        self._domains: dict[str, str] = {}
        self._max = max_entries

    def __call__(self, url: str) -> str:
        match = _NETLOC.match(url)
        if match is None:
            return domain_of(url)
        netloc = match.group(1)
        domain = self._domains.get(netloc)
        if domain is None:
            if len(self._domains) >= self._max:
                self._domains.clear()  # rare; cheaper to refill than to track use
            domain = self._domains[netloc] = domain_of(url)
        return domain
