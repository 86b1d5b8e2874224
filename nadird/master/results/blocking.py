"""Per domain, how many blocking answers (403, 429, 503) came back in a row.

The signal behind the `blocked` alert: any other answer ends the streak,
so a site that refuses only now and then never looks blocked. Only domains
on a streak are kept.
"""

from __future__ import annotations

from collections.abc import Iterable

from nadird.config.alerts import BLOCKING_STATUSES
from nadird.protocol.messages import PageResult

_BLOCKING = frozenset(BLOCKING_STATUSES)


class BlockStreaks:
    def __init__(self) -> None:
        self.streaks: dict[str, int] = {}

    def hit(self, domain: str, times: int = 1) -> None:
        """A blocking answer (a page's status, or a URL handed back throttled)."""
        self.streaks[domain] = self.streaks.get(domain, 0) + times

    def pages(self, domain: str, pages: Iterable[PageResult]) -> None:
        for page in pages:
            if page.status in _BLOCKING:
                self.hit(domain)
            elif page.status and domain in self.streaks:
                del self.streaks[domain]  # it answered: the streak is over
