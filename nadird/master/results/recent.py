"""What the web console shows of recent pages: the last failures (a bounded
ring: fetches that failed, and 4xx/5xx answers), the last fetches of any
outcome (a bounded ring the URL and domain pages filter) and each domain's
last HTTP status and failures (both kinds) by domain. Memory: RECENT_ERRORS
and RECENT_FETCHES entries (about 250 bytes each with their URL) plus one
small int per domain that answered."""

from __future__ import annotations

import time
from collections import Counter, deque
from dataclasses import dataclass

from nadird.common.urls import domain_of
from nadird.master.results.retries import describe
from nadird.protocol.messages import PageResult

RECENT_ERRORS = 200
RECENT_FETCHES = 5000
MAX_ERROR_TEXT = 300


@dataclass(frozen=True, slots=True)
class RecentError:
    url: str
    kind: str
    status: int  # 0: no response
    error: str
    at: float  # wall clock


@dataclass(frozen=True, slots=True)
class RecentFetch:
    url: str
    domain: str
    at: float  # wall clock
    status: int  # 0: no response; 304: checked, not modified
    size: int  # body bytes received
    elapsed: float  # seconds the fetch took
    kind: str | None  # the error kind of a failed fetch


class PageLog:
    def __init__(self, size: int = RECENT_ERRORS, fetches: int = RECENT_FETCHES) -> None:
        self.errors: deque[RecentError] = deque(maxlen=size)  # newest last
        self.fetches: deque[RecentFetch] = deque(maxlen=fetches)  # newest last
        self.last_status: dict[str, int] = {}  # by domain
        self.failures: Counter[str] = Counter()  # by domain

    def observe(self, page: PageResult) -> None:
        domain = domain_of(page.url)
        kind_of = None if page.error_kind is None else page.error_kind.value
        self.fetches.append(
            RecentFetch(
                page.url, domain, time.time(), page.status, page.size, page.elapsed, kind_of
            )
        )
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
