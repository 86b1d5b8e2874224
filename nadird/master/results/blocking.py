"""Per domain, how many blocking answers (403, 429, 503) came back in a row.

The signal behind the `blocked` alert: any other answer ends the streak,
so a site that refuses only now and then never looks blocked. Only domains
on a streak are kept, for the whole master and by job (`job:` rules): a
job's streak counts that job's answers from the domain only.
"""

from __future__ import annotations

from collections.abc import Iterable

from nadird.config.alerts import BLOCKING_STATUSES
from nadird.protocol.messages import PageResult

_BLOCKING = frozenset(BLOCKING_STATUSES)


class BlockStreaks:
    def __init__(self) -> None:
        self.streaks: dict[str, int] = {}
        self.by_job: dict[str, dict[str, int]] = {}  # job -> domain -> streak

    def hit(self, domain: str, times: int = 1, job: str | None = None) -> None:
        """A blocking answer (a page's status, or a URL handed back throttled)."""
        self.streaks[domain] = self.streaks.get(domain, 0) + times
        if job is not None:
            streaks = self.by_job.setdefault(job, {})
            streaks[domain] = streaks.get(domain, 0) + times

    def pages(self, domain: str, pages: Iterable[PageResult], job: str | None = None) -> None:
        for page in pages:
            if page.status in _BLOCKING:
                self.hit(domain, 1, job)
            elif page.status:  # it answered: the streak is over
                self.streaks.pop(domain, None)
                if job is not None and job in self.by_job:
                    self.by_job[job].pop(domain, None)

    def of_job(self, job: str) -> dict[str, int]:
        return dict(self.by_job.get(job, {}))
