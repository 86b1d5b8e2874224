"""Records and stores for the MongoDB tests (imported by the test modules)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pymongo import MongoClient

from nadird.config import StoreConfig
from nadird.store.base import PageRecord
from nadird.store.mongo.store import MongoStore

# Short timeouts: an outage in a test is noticed in half a second.
FAST = {"server_selection_timeout": 0.5, "connect_timeout": 0.5, "operation_timeout": 10.0}


def page_html(i: int, text: str | None = None) -> bytes:
    inner = text if text is not None else f"<h1>Page number {i}</h1><p>words for page {i}</p>"
    return f"<html><head><title>t{i}</title></head><body>{inner}</body></html>".encode()


def record(
    i: int,
    job: str = "default",
    body: bytes | None = None,
    data: dict[str, Any] | None = None,
    **fields: Any,
) -> PageRecord:
    url = f"http://site-{i % 5}.test/p/{i}"
    values: dict[str, Any] = {
        "fp": hashlib.blake2b(url.encode(), digest_size=16).digest(),
        "url": url,
        "final_url": url,
        "status": 200,
        "fetched_at": 1_700_000_000.125 + i,
        "job": job,
        "depth": i % 3,
        "content_type": "text/html; charset=utf-8",
        "data": data if data is not None else {"title": f"t{i}", "tags": ["a", str(i)]},
        "checksum": f"{i:032x}",
        "body": body if body is not None else page_html(i),
        "error": None,
        "redirects": [],
        "node": "w1",
    }
    values.update(fields)
    return PageRecord(**values)


def store_config(uri: str, tmp_path: Path, **overrides: Any) -> StoreConfig:
    values: dict[str, Any] = {"uri": uri, "spool_path": str(tmp_path / "spool.db"), **FAST}
    values.update(overrides)
    return StoreConfig(**values)


def make_store(uri: str, tmp_path: Path, **overrides: Any) -> MongoStore:
    store = MongoStore(uri, store_config(uri, tmp_path, **overrides))
    store.DRAIN_TIMEOUT = 5.0
    return store


@contextmanager
def sync_db(uri: str) -> Iterator[Any]:
    """A blocking client's database, for assertions outside the store."""
    client: MongoClient[dict[str, Any]] = MongoClient(uri, serverSelectionTimeoutMS=3000)
    try:
        yield client.get_default_database()
    finally:
        client.close()
