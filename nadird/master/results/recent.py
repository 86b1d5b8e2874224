"""What the web console shows of recent pages: the last failures (a bounded
ring: fetches that failed, and 4xx/5xx answers) and each domain's last HTTP
status and failures (both kinds) by domain. Memory: RECENT_ERRORS
entries plus one small int per domain that answered."""

from __future__ import annotations

import time
from collections import Counter, deque
from dataclasses import dataclass

from nadird.common.urls import domain_of
from nadird.master.results.retries import describe
from nadird.protocol.messages import PageResult

RECENT_ERRORS = 200
MAX_ERROR_TEXT = 300


@dataclass(frozen=True, slots=True)
class RecentError:
    url: str
    kind: str
    status: int  # 0: no response
    error: str
    at: float  # wall clock


class PageLog:
    def __init__(self, size: int = RECENT_ERRORS) -> None:
        self.errors: deque[RecentError] = deque(maxlen=size)  # newest last
        self.last_status: dict[str, int] = {}  # by domain
        self.failures: Counter[str] = Counter()  # by domain

    def observe(self, page: PageResult) -> None:
        domain = domain_of(page.url)
        if page.status:
            self.last_status[domain] = page.status
        if page.error_kind is not None:
            kind = page.error_kind.value
        elif page.status >= 400:
            kind = f"http {page.status}"
        else:
            return
        self.failures[domain] += 1
        text = describe(page)[:MAX_ERROR_TEXT]
        self.errors.append(RecentError(page.url, kind, page.status, text, time.time()))
