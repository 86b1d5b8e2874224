"""`nadird reextract` on MongoDB (SecantusDB): the shop crawled into it and
re-extracted with new rules, a page stored again meanwhile, bad documents."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from support.mongo_helpers import make_store, sync_db
from support.reextract_helpers import (
    NEW_FIELDS,
    NEW_SCHEMA,
    crawl_shop,
    page_record,
    product_html,
    reextract,
    summary_of,
    valid_once_priced_as_text,
    write_config,
)
from support.shop import SHOP_FIELDS, SHOP_SCHEMA, Shop

from nadird.job.spec import Job
from nadird.reextract.core import Redone, Rules, redo
from nadird.reextract.guard import WouldEmpty
from nadird.reextract.run import Options
from nadird.reextract.run import reextract as reextract_pass
from nadird.store.mongo.keyed import KEYED
from nadird.store.stored import PageUpdate
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow
HTML = ["text/html"]


def items_by_url(uri: str) -> dict[str, dict[str, Any]]:
    with sync_db(uri) as db:
        return {doc["source_url"]: doc["data"] for doc in db.items.find({})}


def test_new_rules_reach_the_stored_items_without_one_request(
    mongo_uri: str, tmp_path: Path
) -> None:
    shop = Shop(count=30, seed=3)
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        crawl_shop(tmp_path, web, shop, mongo_uri)
        before = items_by_url(mongo_uri)
        requests = len(web.entries())
        config = write_config(tmp_path / "new.yaml", mongo_uri, NEW_FIELDS, NEW_SCHEMA)
        done = summary_of(reextract(tmp_path, config))
        assert len(web.entries()) == requests
    after = items_by_url(mongo_uri)
    assert set(after) == set(before) and len(after) == shop.count + 1  # and the listing
    assert done["complete"] is True and done["read"] == len(after)
    assert done["changed"] == len(after) and done["skipped"] == {}
    assert done["became_valid"] == valid_once_priced_as_text(shop) > 0
    for product in shop.products():
        data = next(d for u, d in after.items() if u.endswith(f"/item/{product.index}"))
        assert data["heading"] == (" ".join((product.title or "").split()) or None)
        assert data["price"] == " ".join(product.price_text.split())
    with sync_db(mongo_uri) as db:
        assert db.reextract_checkpoints.count_documents({}) == 0  # a finished pass leaves none


async def test_newer_fetches_win_and_bad_documents_are_counted(
    mongo_uri: str, tmp_path: Path
) -> None:
    rules = Rules.of(Job.from_wire({"fields": NEW_FIELDS, "schema": NEW_SCHEMA}), ["text/html"])
    store = make_store(mongo_uri, tmp_path)
    await store.open()
    try:
        await store.write([page_record(i) for i in range(6)])
        pages = await store.read_pages("default", None, None, 10)
        newer = page_record(0, fetched_at=page_record(0).fetched_at + 60, data={"title": "new"})
        await store.write([newer])  # as the master would, between read and write
        updates = []
        for page in pages:
            assert page.record is not None
            if page.record.url not in (page_record(0).url, page_record(1).url):
                continue
            done = redo(page.record, rules)
            assert isinstance(done, Redone)
            updates.append(PageUpdate(page, dataclasses.replace(page.record, data=done.data)))
        outcome = await store.update_page_data(updates)
        assert outcome.refetched == 1 and len(outcome.landed) == 1
        assert items_by_url(mongo_uri)[newer.url] == {"title": "new"}
        with sync_db(mongo_uri) as db:
            db.pages.update_one({"url": page_record(2).url}, {"$set": {"body": b"not zlib"}})
            db.pages.update_one({"url": page_record(3).url}, {"$unset": {"final_url": 1}})
            db.items.delete_one({"source_url": page_record(4).url})
        result = await reextract_pass(store, rules, Options(chunk=2), asyncio.Event())
    finally:
        await store.close()
    tally = result.tally
    assert tally.read == 6 and tally.skipped == {"corrupt_body": 1, "no_item": 1, "unreadable": 1}
    # Page 0 (its newer fetch) and page 5; page 1 was updated above already.
    assert tally.changed == 2 and tally.unchanged == 1
    assert items_by_url(mongo_uri)[newer.url]["heading"] == "Product 0"


async def test_a_revisiting_keyed_job_gets_versions_and_keyed_items(
    mongo_uri: str, tmp_path: Path
) -> None:
    revisit = {"revisit": {"every": "1h"}, "item_key": ["title"]}
    old = Rules.of(Job.from_wire({"fields": {"title": [{"css": "h1"}]}, **revisit}), ["text/html"])
    records = []
    for i in range(4):
        record = page_record(i)
        done = redo(record, old)
        assert isinstance(done, Redone)
        record.data, record.signature, record.item_key = done.data, done.signature, done.item_key
        records.append(record)
    new_job = Job.from_wire({"fields": NEW_FIELDS, "schema": NEW_SCHEMA, **revisit})
    new = Rules.of(new_job, ["text/html"])
    store = make_store(mongo_uri, tmp_path)
    await store.open()
    try:
        await store.write(records)  # the first version of each page
        first = await reextract_pass(store, new, Options(), asyncio.Event())
        again = await reextract_pass(store, new, Options(), asyncio.Event())
        changes = [c async for c in store.iter_changes()]
    finally:
        await store.close()
    assert first.tally.changed == 4 and first.tally.versions == 4
    assert again.tally.unchanged == 4 and again.tally.versions == 0
    assert len(changes) == 4 and all("heading" in c["changes"] for c in changes)
    with sync_db(mongo_uri) as db:
        signatures = {
            d["url"]: d["signature"] for d in db.pages.find({}, {"signature": 1, "url": 1})
        }
        latest = {d["url"]: d["signature"] for d in db.changes.find({}).sort("_id", 1)}
    assert signatures == latest  # each page's signature is its latest version's
    with sync_db(mongo_uri) as db:  # the keyed items follow the new fields
        keyed = {d["key"]: d["data"] for d in db[KEYED].find({})}
    assert sorted(keyed) == [f"Product {i}" for i in range(4)]
    assert all(data["heading"] == key for key, data in keyed.items())


async def test_rules_that_clear_every_item_stop_before_writing_unless_forced(
    mongo_uri: str, tmp_path: Path
) -> None:
    nothing = Job.from_wire({"fields": {"title": [{"css": "h2.gone"}]}})
    rules = Rules.of(nothing, ["text/html"])
    store = make_store(mongo_uri, tmp_path)
    await store.open()
    try:
        await store.write([page_record(i) for i in range(5)])
        with pytest.raises(WouldEmpty, match="--force"):
            await reextract_pass(store, rules, Options(chunk=2), asyncio.Event())
        assert all(d == {"title": f"Product {i}"} for i, d in enumerate(_by_index(mongo_uri)))
        with sync_db(mongo_uri) as db:
            assert db.reextract_checkpoints.count_documents({}) == 0
        forced = await reextract_pass(store, rules, Options(force=True), asyncio.Event())
    finally:
        await store.close()
    assert forced.tally.changed == 5
    assert all(d == {"title": None} for d in _by_index(mongo_uri))


def _by_index(uri: str) -> list[dict[str, Any]]:
    found = items_by_url(uri)
    return [found[page_record(i).url] for i in range(len(found))]


async def test_reextraction_versions_are_marked_and_are_no_site_change(
    mongo_uri: str, tmp_path: Path
) -> None:
    revisit = {"revisit": {"every": "1h"}}
    old = Rules.of(Job.from_wire({"fields": SHOP_FIELDS, "schema": SHOP_SCHEMA, **revisit}), HTML)
    new = Rules.of(Job.from_wire({"fields": NEW_FIELDS, "schema": NEW_SCHEMA, **revisit}), HTML)
    first = signed(page_record(0), old)
    later = signed(page_record(0, product_html(0, "9.99"), fetched_at=first.fetched_at + 60), new)
    store = make_store(mongo_uri, tmp_path)
    await store.open()
    try:
        await store.write([first])
        await reextract_pass(store, new, Options(), asyncio.Event())
        await store.write([later])  # the site changes after the re-extraction
        redone, site = [c async for c in store.iter_changes()]
        recent = await store.recent_changes(10)
    finally:
        await store.close()
    assert redone["reextract"] is True and redone["time"] == redone["previous_time"]
    assert "reextract" not in site and site["changes"] == {"price": {"old": "12.50", "new": "9.99"}}
    assert [c["time"] for c in recent] == [later.fetched_at]  # site changes only
    with sync_db(mongo_uri) as db:
        assert sorted(d.get("reextract", False) for d in db.changes.find({})) == [0, 0, 1]


def signed(record: Any, rules: Rules) -> Any:
    done = redo(record, rules)
    assert isinstance(done, Redone)
    record.data, record.signature = done.data, done.signature
    return record


async def test_near_duplicates_are_decided_in_fetch_order_on_mongodb(
    mongo_uri: str, tmp_path: Path
) -> None:
    """The store's _id order is a hash's: the first page of the wire story is
    still the one fetched first, and a second run writes nothing. The copy
    with the very same HTML is the store's own `duplicate_of` (one item for
    both), which the pass skips."""
    from support.articles.wire import COPIES, OTHER, WIRE
    from support.reextract_helpers import WIRE_FIRST, wire_records

    store = make_store(mongo_uri, tmp_path)
    await store.open()
    try:
        await store.write(wire_records())
        rules = Rules.of(Job(article=True), HTML)
        first = await reextract_pass(store, rules, Options(chunk=2), asyncio.Event())
        again = await reextract_pass(store, rules, Options(chunk=2), asyncio.Event())
    finally:
        await store.close()
    assert first.tally.near_duplicates == {"marked": 2, "cleared": 1}
    assert again.tally.near_duplicates == {} and again.tally.changed == 0
    with sync_db(mongo_uri) as db:
        pages = {d["url"]: d for d in db.pages.find({})}
    original = f"http://wire.test{WIRE_FIRST}"
    exact = f"http://wire.test{WIRE}ledger/tunnel-print"
    assert pages[exact].get("duplicate_of") is not None
    for path in COPIES:
        url = f"http://wire.test{path}"
        copy = path not in (WIRE_FIRST, OTHER) and url != exact
        assert pages[url].get("near_duplicate_of") == (original if copy else None), path
