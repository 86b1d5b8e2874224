"""A worker's page result: the store's record of it, and how it is counted."""

from __future__ import annotations

from nadird.protocol.messages import PageResult
from nadird.store.base import PageRecord


def page_record(page: PageResult, job: str, node: str) -> PageRecord:
    return PageRecord(
        fp=page.fp,
        url=page.url,
        final_url=page.final_url,
        status=page.status,
        fetched_at=page.fetched_at,
        job=job,
        depth=page.depth,
        content_type=page.content_type,
        data=page.data,
        checksum=page.checksum,
        body=page.body,
        error=page.error,
        redirects=page.redirects,
        node=node,
        canonical=page.canonical,
        rendered=page.rendered,
        headers=page.headers,
    )


def error_kind(page: PageResult) -> str | None:
    """`timeout`, `connect`, `robots`...; None for a page without an error.

    A 404 is no error: the server answered, the page is fetched and stored,
    and its status is counted by class (status_class) like every other."""
    if page.error is not None:
        return page.error.split(":", 1)[0]
    return None


def status_class(status: int) -> str:
    """`2xx`, `3xx`, `4xx`, `5xx` (a status out of range is `other`)."""
    return f"{status // 100}xx" if 100 <= status < 600 else "other"
