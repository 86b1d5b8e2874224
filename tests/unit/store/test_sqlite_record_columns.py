"""An older SQLite store gains the record columns declared since."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from support.record_schema_helpers import OLD_URL, record

from nadird.common.record import facts
from nadird.store.base import PageRecord
from nadird.store.sqlite.schema import SCHEMA_VERSION
from nadird.store.sqlite.store import SqliteStore


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION))
async def test_an_older_store_gains_the_columns_declared_since(
    tmp_path: Path, version: int
) -> None:
    path = tmp_path / "old.db"
    store = SqliteStore(str(path))
    await store.open()
    await store.write([record(1, OLD_URL)])
    await store.close()
    later = [f.name for f, declared in facts(PageRecord) if declared.since > version]
    with sqlite3.connect(path) as raw:  # what a store of that version looked like
        for name in later:
            raw.execute(f"ALTER TABLE pages DROP COLUMN {name}")
        raw.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))

    store = SqliteStore(str(path))
    await store.open()
    new = record(2, "http://a.test/b", canonical=OLD_URL, rendered=True, headers={"etag": '"1"'})
    await store.write([new])
    back = [record async for record in store.iter_records()]
    await store.close()

    assert later  # the version is older than the store's
    assert [(r.url, r.canonical, r.rendered, r.headers) for r in back] == [
        (OLD_URL, None, False, {}),
        (new.url, OLD_URL, True, {"etag": '"1"'}),
    ]
    with sqlite3.connect(path) as raw:
        (found,) = raw.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert found == str(SCHEMA_VERSION)
