"""Records and a filled SQLite store for the CSV export tests."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from nadird.store.base import PageRecord
from nadird.store.sqlite.store import SqliteStore
from support.export_records import record

CHINESE = "北京烤鸭，价格：¥88"


RECORDS = [
    record(
        0,
        data={"title": CHINESE, "tags": ["a|b", "c,d", 'say "hi"', "two\nlines"], "url": "x"},
        redirects=["http://example.com/0", "https://example.com/0/"],
        headers={"etag": '"abc"', "content-language": "zh"},
        canonical="https://example.com/canonical",
        rendered=True,
        checksum="c0",
    ),
    record(1, data={"title": "", "tags": [], "data.x": "prefixed"}, content_type=None),
    record(2, status=0, error="timeout: read\nafter 30 s", fetched_at=1_796_119_502.125),
]


async def _fill(path: Path, records: list[PageRecord]) -> SqliteStore:
    store = SqliteStore(str(path))
    await store.open()
    await store.write(records)
    return store


@pytest.fixture
def store_file(tmp_path: Path) -> Path:
    path = tmp_path / "crawl.db"

    async def fill() -> None:
        await (await _fill(path, RECORDS)).close()

    asyncio.run(fill())
    return path
