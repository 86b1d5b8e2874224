"""The store interface every backend implements (embedded SQLite, MongoDB).

The store is keyed by URL fingerprint: writing a record whose fingerprint is
already stored replaces it, so a replayed or late result is a no-op in effect
(at-least-once fetch, exactly-once store). `write` returns only once the
records are durable; that return is what lets the master forget the URLs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class PageRecord:
    fp: bytes
    url: str
    final_url: str
    status: int
    fetched_at: float
    job: str
    depth: int
    content_type: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    checksum: str | None = None
    body: bytes | None = None
    error: str | None = None
    redirects: list[str] = field(default_factory=list)
    node: str | None = None
    canonical: str | None = None  # the page's <link rel=canonical>, when it names another URL
    rendered: bool = False  # fields and links came from a browser's DOM (job render)
    headers: dict[str, str] = field(default_factory=dict)  # selected response headers

    def export_dict(self) -> dict[str, Any]:
        """The JSON shape shared by `nadird export` and `nadird crawl --out`."""
        return {
            "url": self.url,
            "final_url": self.final_url,
            "status": self.status,
            "fetched_at": self.fetched_at,
            "job": self.job,
            "depth": self.depth,
            "content_type": self.content_type,
            "checksum": self.checksum,
            "error": self.error,
            "redirects": self.redirects,
            "canonical": self.canonical,
            "rendered": self.rendered,
            "headers": self.headers,
            "data": self.data,
        }


class Store(Protocol):
    async def open(self) -> None: ...

    async def write(self, records: Sequence[PageRecord]) -> None:
        """Upsert by fingerprint; durable when it returns."""

    async def count(self, job: str | None = None) -> int: ...

    def iter_records(self, job: str | None = None) -> AsyncIterator[PageRecord]: ...

    async def close(self) -> None: ...
