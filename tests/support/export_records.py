"""Page records for the export tests: one per number, a field changed at will."""

from __future__ import annotations

import hashlib
from typing import Any

from nadird.store.base import PageRecord


def record(n: int, **changes: Any) -> PageRecord:
    url = f"https://example.com/{n}"
    base = PageRecord(
        fp=hashlib.blake2b(url.encode(), digest_size=16).digest(),
        url=url,
        final_url=url,
        status=200,
        fetched_at=1_796_119_500.0 + n,  # 2026-12-01T10:05:00Z + n seconds
        job="news",
        depth=n,
        content_type="text/html",
    )
    for name, value in changes.items():
        setattr(base, name, value)
    return base
