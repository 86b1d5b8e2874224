"""Re-extraction against a real SQLite file, in-process: history versions,
a page the master stores again meanwhile, and the rules of what is skipped."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sqlite3
from pathlib import Path
from typing import Any

from support.reextract_helpers import NEW_FIELDS, NEW_SCHEMA, page_record, product_html
from support.shop import SHOP_FIELDS, SHOP_SCHEMA

from nadird.job.spec import Job
from nadird.reextract.core import NOT_HTML, Redone, Rules, media_type, redo
from nadird.reextract.run import Options, reextract
from nadird.store.sqlite.store import SqliteStore
from nadird.store.stored import PageUpdate
from nadird.worker.parse.signature import fields_signature

HTML = ["text/html"]


def job(fields: dict[str, Any], schema: dict[str, Any], **extra: Any) -> Job:
    return Job.from_wire({"name": "default", "fields": fields, "schema": schema, **extra})


async def opened(path: Path, records: list[Any]) -> SqliteStore:
    store = SqliteStore(str(path))
    await store.open()
    await store.write(records)
    return store


def run(store: SqliteStore, rules: Rules) -> Any:
    return asyncio.run(reextract(store, rules, Options(chunk=4), asyncio.Event()))


def test_a_revisiting_job_gets_one_version_per_changed_page(tmp_path: Path) -> None:
    revisit = {"revisit": {"every": "1h"}}
    old = Rules.of(job(SHOP_FIELDS, SHOP_SCHEMA, **revisit), HTML)
    # As a worker stored them: the old rules' data and signature, one version each.
    records = []
    for i in range(10):
        record = page_record(i)
        done = redo(record, old)
        assert isinstance(done, Redone)
        record.data, record.signature = done.data, done.signature
        records.append(record)
    new = Rules.of(job(NEW_FIELDS, NEW_SCHEMA, **revisit), HTML)

    async def go() -> tuple[Any, Any, list[dict[str, Any]]]:
        store = await opened(tmp_path / "h.db", records)
        try:
            first = await reextract(store, new, Options(chunk=4), asyncio.Event())
            second = await reextract(store, new, Options(chunk=4), asyncio.Event())
            return first, second, [c async for c in store.iter_changes()]
        finally:
            await store.close()

    first, second, changes = asyncio.run(go())
    assert first.tally.changed == 10 and first.tally.versions == 10
    assert second.tally.unchanged == 10 and second.tally.versions == 0
    assert len(changes) == 10
    # A new field, and prices kept as the text the page shows.
    assert {tuple(sorted(c["changes"])) for c in changes} == {("heading", "price")}
    assert all(c["changes"]["price"] == {"old": 12.5, "new": "12.50"} for c in changes)
    with sqlite3.connect(tmp_path / "h.db") as conn:
        stored = conn.execute("SELECT data, signature FROM pages").fetchall()
    # The stored signature is the new data's, as a fetch would have signed it.
    assert all(sig == fields_signature(json.loads(data)) for data, sig in stored)


def test_a_job_that_does_not_revisit_gets_no_versions(tmp_path: Path) -> None:
    store = asyncio.run(opened(tmp_path / "n.db", [page_record(i) for i in range(5)]))
    try:
        done = run(store, Rules.of(job(NEW_FIELDS, NEW_SCHEMA), HTML))
    finally:
        asyncio.run(store.close())
    assert done.tally.changed == 5 and done.tally.versions == 0
    with sqlite3.connect(tmp_path / "n.db") as conn:
        assert conn.execute("SELECT count(*) FROM changes").fetchone() == (0,)


def test_a_page_stored_again_meanwhile_keeps_the_newer_data(tmp_path: Path) -> None:
    rules = Rules.of(job(NEW_FIELDS, NEW_SCHEMA), HTML)

    async def go() -> tuple[Any, dict[str, Any]]:
        store = await opened(tmp_path / "r.db", [page_record(1), page_record(2)])
        try:
            pages = await store.read_pages("default", None, None, 10)
            # The master stores a newer fetch of page 1 between read and write.
            newer = page_record(1, fetched_at=pages[0].guard + 60, data={"title": "newer"})
            await store.write([newer])
            updates = []
            for page in pages:
                assert page.record is not None
                done = redo(page.record, rules)
                assert isinstance(done, Redone)
                updates.append(PageUpdate(page, dataclasses.replace(page.record, data=done.data)))
            outcome = await store.update_page_data(updates)
            return outcome, {r.url: r.data async for r in store.iter_records()}
        finally:
            await store.close()

    outcome, stored = asyncio.run(go())
    assert outcome.refetched == 1 and outcome.landed == [outcome.landed[0]]
    assert stored["http://shop.test/p/1"] == {"title": "newer"}
    assert stored["http://shop.test/p/2"]["heading"] == "Product 2"


def test_stored_content_types_and_charsets_read_as_the_worker_reads_them() -> None:
    assert media_type("text/html") == ("text/html", None)
    assert media_type('Text/HTML; charset="GB18030"') == ("text/html", "GB18030")
    assert media_type(None) == (None, None)
    rules = Rules.of(job(NEW_FIELDS, NEW_SCHEMA), HTML)
    gbk = "<html><body><h1 class='title'>价格</h1></body></html>".encode("gb18030")
    record = page_record(1, body=gbk, content_type="text/html; charset=gb18030")
    done = redo(record, rules)
    assert isinstance(done, Redone) and done.data["title"] == "价格"
    assert redo(page_record(2, content_type="application/pdf"), rules) == NOT_HTML


def test_a_json_response_is_read_again_as_json() -> None:
    rules = Rules.of(job({"price": [{"jmes": "offer.price"}]}, {}), HTML)
    body = b'{"offer": {"price": 12.5}}'
    record = page_record(1, body=body, content_type="application/json")
    assert redo(record, rules) == Redone({"price": 12.5}, None)
    # A job that reads no JSON leaves JSON responses as they are.
    assert redo(record, Rules.of(job(NEW_FIELDS, NEW_SCHEMA), HTML)) == NOT_HTML


class StopsAfterOneChunk(SqliteStore):
    """The real store, which asks the pass to stop once a chunk is written
    (as a Ctrl-C would between chunks)."""

    def __init__(self, path: str, stop: asyncio.Event) -> None:
        super().__init__(path)
        self.stop = stop

    async def update_page_data(self, updates: Any, checkpoint: Any = None) -> Any:
        done = await super().update_page_data(updates, checkpoint)
        self.stop.set()
        return done


def test_a_resumed_pass_keeps_its_since(tmp_path: Path) -> None:
    rules = Rules.of(job(NEW_FIELDS, NEW_SCHEMA), HTML)
    records = [page_record(i) for i in range(10)]
    since = records[2].fetched_at  # pages 2 to 9

    async def go() -> tuple[Any, Any]:
        stop = asyncio.Event()
        store = StopsAfterOneChunk(str(tmp_path / "s.db"), stop)
        await store.open()
        await store.write(records)
        try:
            first = await reextract(store, rules, Options(since=since, chunk=4), stop)
            # Given again with another --since (`6h ago` is another moment
            # each time): the pass goes on with its own.
            rest = await reextract(store, rules, Options(since=None, chunk=4), asyncio.Event())
            return first, rest
        finally:
            await store.close()

    first, rest = asyncio.run(go())
    assert first.complete is False and first.tally.read == 4
    assert rest.resumed is True and rest.complete is True
    assert rest.tally.read == 8 and rest.tally.changed == 8 and rest.read_now == 4


def test_keyed_items_follow_the_reextracted_fields(tmp_path: Path) -> None:
    keyed = {"item_key": ["title"]}
    old = Rules.of(job(SHOP_FIELDS, SHOP_SCHEMA, **keyed), HTML)
    records = []
    for i in range(3):
        record = page_record(i)
        done = redo(record, old)
        assert isinstance(done, Redone) and done.item_key == f"Product {i}"
        record.data, record.item_key = done.data, done.item_key
        records.append(record)
    new = Rules.of(job(NEW_FIELDS, NEW_SCHEMA, **keyed), HTML)

    async def go() -> tuple[Any, list[Any]]:
        store = await opened(tmp_path / "k.db", records)  # the keyed items as crawled
        try:
            done = await reextract(store, new, Options(), asyncio.Event())
            return done, [item async for item in store.iter_items()]
        finally:
            await store.close()

    done, items = asyncio.run(go())
    assert done.tally.changed == 3
    assert sorted(item.key for item in items) == ["Product 0", "Product 1", "Product 2"]
    assert all(item.data["heading"] == item.key and item.data["price"] == "12.50" for item in items)


def revisited(i: int, rules: Rules, **fields: Any) -> Any:
    """Page i as a worker of `rules` stored it: data and signature."""
    record = page_record(i, **fields)
    done = redo(record, rules)
    assert isinstance(done, Redone)
    record.data, record.signature = done.data, done.signature
    return record


def test_reextraction_versions_are_marked_and_are_no_site_change(tmp_path: Path) -> None:
    revisit = {"revisit": {"every": "1h"}}
    old = Rules.of(job(SHOP_FIELDS, SHOP_SCHEMA, **revisit), HTML)
    new = Rules.of(job(NEW_FIELDS, NEW_SCHEMA, **revisit), HTML)
    first = revisited(0, old)
    # The site changes after the re-extraction: a new price, fetched later.
    later = revisited(0, new, body=product_html(0, "9.99"), fetched_at=first.fetched_at + 60)

    async def go() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        store = await opened(tmp_path / "m.db", [first])
        try:
            await reextract(store, new, Options(), asyncio.Event())
            await store.write([later])
            return [c async for c in store.iter_changes()], await store.recent_changes(10)
        finally:
            await store.close()

    changes, recent = asyncio.run(go())
    redone, site = changes
    assert redone["reextract"] is True and redone["time"] == redone["previous_time"]
    assert set(redone["changes"]) == {"heading", "price"}
    # The site's change is compared with the re-extracted version: the price alone.
    assert "reextract" not in site and site["previous_time"] == first.fetched_at
    assert site["changes"] == {"price": {"old": "12.50", "new": "9.99"}}
    assert [c["time"] for c in recent] == [later.fetched_at]  # site changes only


def test_a_history_made_before_versions_were_marked_opens_and_reads(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TABLE changes (id INTEGER PRIMARY KEY, url TEXT NOT NULL, job TEXT NOT NULL,"
            " fetched_at REAL NOT NULL, signature TEXT NOT NULL, data TEXT NOT NULL)"
        )
        for at, price in ((1.0, 1), (2.0, 2)):
            conn.execute(
                "INSERT INTO changes (url, job, fetched_at, signature, data) VALUES (?,?,?,?,?)",
                ("http://a/1", "default", at, str(price), json.dumps({"price": price})),
            )

    async def go() -> list[dict[str, Any]]:
        store = await opened(db, [])
        try:
            return [c async for c in store.iter_changes()]
        finally:
            await store.close()

    [change] = asyncio.run(go())
    assert "reextract" not in change and change["changes"] == {"price": {"old": 1, "new": 2}}
