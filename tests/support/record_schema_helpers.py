"""A page record carrying a field added to the declared record."""

from __future__ import annotations

from typing import Any

from nadird.store.base import PageRecord

OLD_URL = "http://a.test/old"


def record(n: int, url: str, **fields: Any) -> PageRecord:
    return PageRecord(
        fp=bytes([n]) * 16,
        url=url,
        final_url=url,
        status=200,
        fetched_at=float(n),
        job="j",
        depth=0,
        **fields,
    )
