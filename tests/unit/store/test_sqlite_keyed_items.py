"""The keyed items a SQLite store keeps: one per (job, key) across URLs,
upserted by fetch time, and added when an older store is opened."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from support.keyed_items_helpers import _items, _three_urls_then_a_recrawl, page

from nadird.items.keys import KEY_ERROR, apply_key, compile_key
from nadird.store.base import PageRecord
from nadird.store.items import KeyedItem, keyed_items
from nadird.store.sqlite.schema import SCHEMA_VERSION
from nadird.store.sqlite.store import SqliteStore


def test_a_batch_merges_to_one_item_per_key_with_the_latest_fields() -> None:
    items = keyed_items(
        [
            page("http://s.test/a", 20.0, {"price": 2}),
            page("http://s.test/b", 10.0, {"price": 1}),
            page("http://s.test/a", 30.0, {"price": 3}),
            page("http://s.test/c", 40.0, {"price": 9, "_valid": False}),  # invalid: left out
            page("http://s.test/d", 40.0, {"price": 9}, key=None),  # no key: left out
        ]
    )
    assert items == [
        KeyedItem("shop", "A1", "http://s.test/a", 10.0, 30.0, {"price": 3}, urls=[
            "http://s.test/a", "http://s.test/b"
        ])
    ]  # fmt: skip


def _sqlite(tmp_path: Path) -> SqliteStore:
    return SqliteStore(str(tmp_path / "crawl.db"))


def test_sqlite_keeps_one_item_per_key_and_a_recrawl_updates_it(tmp_path: Path) -> None:
    async def main() -> None:
        store = _sqlite(tmp_path)
        await store.open()
        try:
            await _three_urls_then_a_recrawl(store)
        finally:
            await store.close()

    asyncio.run(main())
    # The (job, key) constraint.
    with sqlite3.connect(tmp_path / "crawl.db") as raw, pytest.raises(sqlite3.IntegrityError):
        raw.execute(
            "INSERT INTO keyed_items (job, key, url, urls, first_seen, updated_at, data) "
            "VALUES ('shop', 'A1', 'u', '[]', 0, 0, '{}')"
        )


def test_an_item_without_its_key_stays_on_its_page(tmp_path: Path) -> None:
    data = {"sku": None, "title": "t"}
    apply_key(compile_key(["sku"]), "u", "u", data)

    async def main() -> tuple[list[KeyedItem], list[PageRecord]]:
        store = _sqlite(tmp_path)
        await store.open()
        try:
            await store.write([page("http://s.test/x", 1.0, data, key=None)])
            return await _items(store), [r async for r in store.iter_records()]
        finally:
            await store.close()

    items, records = asyncio.run(main())
    assert items == []
    assert records[0].data["_errors"] == {KEY_ERROR: "sku has no value"}


def test_a_schema_6_store_gets_keyed_items_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    asyncio.run(_open_close(path))
    with sqlite3.connect(path) as raw:  # as nadird with schema 6 left it
        raw.execute("DROP TABLE keyed_items")
        raw.execute("ALTER TABLE pages DROP COLUMN item_key")
        raw.execute("ALTER TABLE pages DROP COLUMN fallback_from")
        raw.execute("ALTER TABLE pages DROP COLUMN method")  # schema 8's, too
        raw.execute("ALTER TABLE pages DROP COLUMN meta")
        raw.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
    asyncio.run(_open_close(path, page("http://s.test/1", 1.0, {"price": 1})))
    with sqlite3.connect(path) as raw:
        (version,) = raw.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        keyed = raw.execute("SELECT job, key, urls FROM keyed_items").fetchall()
        columns = {row[1] for row in raw.execute("PRAGMA table_info(pages)")}
    assert version == str(SCHEMA_VERSION) == "9"
    assert keyed == [("shop", "A1", '["http://s.test/1"]')]
    assert {"item_key", "fallback_from", "method", "meta"} <= columns


async def _open_close(path: Path, *records: PageRecord) -> None:
    store = SqliteStore(str(path))
    await store.open()
    try:
        await store.write(list(records))
    finally:
        await store.close()
