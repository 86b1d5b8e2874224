"""A bag's URL as a worker crawls it, and the results that need no document:
a fetch that failed, and a 304 Not Modified."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nadird.common.errors import FetchError
from nadird.job.request import RequestSpec
from nadird.protocol.messages import PageResult
from nadird.worker.fetch.fetcher import FetchOutcome

NOT_MODIFIED = 304
# A stored header value is cut here: ETags and dates are short, and a hostile
# server must not fill the store (or the results message) through one.
MAX_HEADER_CHARS = 1024


@dataclass(frozen=True, slots=True)
class PageTask:
    url: str
    fp: bytes
    depth: int
    row: int = 0  # Bag.rows entry, echoed in the result
    etag: str = ""  # the validators of a revisit (Bag.validators)
    last_modified: str = ""
    request: RequestSpec | None = None  # Bag.requests entry; None: a plain GET

    def asked(self) -> dict[str, Any]:
        """The record's `method` and `meta` (nothing for a plain GET: the defaults)."""
        spec = self.request
        return {} if spec is None else {"method": spec.method, "meta": spec.meta}

    def conditional(self) -> dict[str, str]:
        """The request headers that let the server answer 304 Not Modified."""
        headers = {}
        if self.etag:
            headers["If-None-Match"] = self.etag
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers


def not_modified(task: PageTask, outcome: FetchOutcome, started: float) -> PageResult:
    """A 304: checked and unchanged. No body, fields or links: the master keeps
    the stored record and the links of the last full fetch."""
    headers = outcome.headers
    return PageResult(
        url=task.url,
        fp=task.fp,
        final_url=outcome.final_url,
        status=NOT_MODIFIED,
        fetched_at=started,
        depth=task.depth,
        row=task.row,
        elapsed=outcome.elapsed,
        # A 304 may send updated validators; the ones sent stay valid otherwise.
        etag=headers.get("etag", task.etag)[:MAX_HEADER_CHARS],
        last_modified=headers.get("last-modified", task.last_modified)[:MAX_HEADER_CHARS],
        **task.asked(),
        exchanges=outcome.exchanges,
    )


def error_result(task: PageTask, started: float, error: FetchError) -> PageResult:
    """The result of a page that failed: status 0, the error's kind and text."""
    return PageResult(
        url=task.url,
        fp=task.fp,
        final_url=task.url,
        status=0,
        fetched_at=started,
        depth=task.depth,
        error=error.message[:1000],
        error_kind=error.kind,
        row=task.row,
        **task.asked(),
    )
