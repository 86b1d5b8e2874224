"""Turn a worker's page result into the store's record."""

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
