"""History retention on MongoDB (SecantusDB): as on SQLite
(tests/unit/store/test_history_retention.py)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from support.mongo_helpers import make_store, sync_db
from support.retention_helpers import check_retention

import nadird.store.mongo.trim as mongo_trim


async def test_mongo_history_is_trimmed_to_the_jobs_retention(
    mongo_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mongo_trim, "URLS_PER_STEP", 2)  # rounds over several steps

    def read() -> list[tuple[str, float]]:
        with sync_db(mongo_uri) as db:
            return [
                (d["url"], d["fetched_at"].replace(tzinfo=dt.UTC).timestamp())
                for d in db.changes.find({})
            ]

    store = make_store(mongo_uri, tmp_path)
    await store.open()
    try:
        await check_retention(store, read)
    finally:
        await store.close()
