"""MongoStore against a real MongoDB-protocol server (SecantusDB, or
NADIRD_TEST_MONGODB_URI): schema, indexes, upserts, dedup, size limits, export,
start-up errors."""

from __future__ import annotations

import io
import json
import os
import zlib
from pathlib import Path

import pytest
from support.mongo_helpers import make_store, page_html, record, store_config, sync_db

from nadird.common.errors import StoreError
from nadird.store.export import export_records
from nadird.store.mongo.docs import item_id
from nadird.store.mongo.store import MongoStore
from nadird.store.open import open_store
from nadird.store.sqlite.store import SqliteStore
from nadird.testing.mongo import free_port, with_database


async def test_open_store_selects_mongo_and_round_trips_records(
    mongo_uri: str, tmp_path: Path
) -> None:
    store = open_store(mongo_uri, store_config(mongo_uri, tmp_path))
    assert isinstance(store, MongoStore)
    records = [
        record(
            i,
            rendered=i % 2 == 1,
            canonical=f"http://site-0.test/c/{i}" if i % 3 else None,
            headers={"etag": f'"{i}"', "last-modified": "Sun, 29 Nov 2026 10:00:00 GMT"}
            if i % 4
            else {},
        )
        for i in range(20)
    ]
    await store.open()
    try:
        await store.write(records)
        back = {r.fp: r for r in [r async for r in store.iter_records()]}
        assert await store.count() == 20
    finally:
        await store.close()
    assert set(back) == {r.fp for r in records}
    for original in records:
        assert back[original.fp] == original


async def test_export_has_the_same_json_shape_as_sqlite(mongo_uri: str, tmp_path: Path) -> None:
    records = [
        record(1),
        record(2, job="other", data={}, content_type="application/pdf", body=b"%PDF"),
        record(3, status=0, error="timeout: read", body=None, data={}, content_type=None),
        record(4, redirects=["http://site-4.test/old"]),
        record(5, rendered=True, canonical="http://site-0.test/c", headers={"etag": '"5"'}),
    ]
    outputs = []
    for store in (
        SqliteStore(str(tmp_path / "s.db")),
        make_store(mongo_uri, tmp_path),
    ):
        await store.open()
        try:
            await store.write(records)
            out = io.StringIO()
            assert await export_records(store, out, "jsonl") == 5
        finally:
            await store.close()
        rows = [json.loads(line) for line in out.getvalue().splitlines()]
        outputs.append(sorted(rows, key=lambda row: row["url"]))
    assert outputs[0] == outputs[1]


async def test_indexes_are_created_idempotently_and_ttl_follows_config(
    mongo_uri: str, tmp_path: Path
) -> None:
    for _ in range(2):  # a second start finds them and changes nothing
        store = make_store(mongo_uri, tmp_path)
        await store.open()
        await store.close()
    with sync_db(mongo_uri) as db:
        pages = db.pages.index_information()
        items = db.items.index_information()
    assert pages["url"]["unique"] is True
    assert pages["fetched_at_desc"]["key"] == [("fetched_at", -1)]
    assert pages["fetched_at_id"]["key"] == [("fetched_at", 1), ("_id", 1)]  # export --since
    assert pages["fetched_at_ttl"]["expireAfterSeconds"] == 30 * 86400
    assert items["job_updated_at"]["key"] == [("job", 1), ("updated_at", -1)]
    assert items["job_text_fp"]["key"] == [("job", 1), ("text_fp", 1)]

    store = make_store(mongo_uri, tmp_path, raw_retention_days=7)
    await store.open()
    await store.close()
    with sync_db(mongo_uri) as db:
        assert db.pages.index_information()["fetched_at_ttl"]["expireAfterSeconds"] == 7 * 86400

    store = make_store(mongo_uri, tmp_path, raw_retention_days=0)
    await store.open()
    await store.close()
    with sync_db(mongo_uri) as db:
        assert "fetched_at_ttl" not in db.pages.index_information()


async def test_schema_of_pages_and_items(mongo_uri: str, tmp_path: Path) -> None:
    rec = record(7)
    store = make_store(mongo_uri, tmp_path)
    await store.open()
    try:
        await store.write([rec])
    finally:
        await store.close()
    with sync_db(mongo_uri) as db:
        page = db.pages.find_one({"_id": rec.fp})
        item = db.items.find_one({"_id": item_id(rec.fp, rec.job)})
    assert page is not None and item is not None
    assert page["url"] == rec.url and page["job"] == "default" and page["node"] == "w1"
    assert zlib.decompress(page["body"]) == rec.body
    assert page["body_truncated"] is False and page["body_bytes"] == len(rec.body or b"")
    assert page["fetched_at"].timestamp() == pytest.approx(rec.fetched_at, abs=0.001)
    assert len(page["text_fp"]) == 16 and "duplicate_of" not in page
    assert item["page_id"] == rec.fp and item["source_url"] == rec.url
    assert item["data"] == rec.data and item["text_fp"] == page["text_fp"]
    assert item["updated_at"] >= item["fetched_at"]


async def test_replayed_batch_changes_nothing(mongo_uri: str, tmp_path: Path) -> None:
    records = [record(i) for i in range(30)]
    store = make_store(mongo_uri, tmp_path)
    await store.open()
    try:
        await store.write(records)
        await store.write(records[10:])  # a late replay of part of it
        await store.write([*records[:5], *records[:5]])  # the same URL twice in a batch
        assert await store.count() == 30
        assert store.pages_added == 30  # a page written again is no new page
    finally:
        await store.close()
    with sync_db(mongo_uri) as db:
        assert db.items.count_documents({}) == 30
        assert db.pages.count_documents({"duplicate_of": {"$exists": True}}) == 0


async def test_same_text_on_two_urls_is_one_item(mongo_uri: str, tmp_path: Path) -> None:
    text = "<h1>Same   Product</h1><p>Same words</p><script>var id = 1;</script>"
    first = record(1, body=page_html(1, text))
    # Other markup, spacing, case, script: the same main text.
    second = record(2, body=page_html(2, " <h1>same product</h1>\n<div>SAME words</div>"))
    third_batch = record(3, body=page_html(3, text))
    other_job = record(4, job="other", body=page_html(4, text))
    store = make_store(mongo_uri, tmp_path)
    await store.open()
    try:
        await store.write([first, second])
        await store.write([third_batch, other_job])
        await store.write([first, second])  # replay: the first stays the owner
        exported = {r.url: r for r in [r async for r in store.iter_records()]}
        assert store.duplicates >= 2
    finally:
        await store.close()
    with sync_db(mongo_uri) as db:
        pages = {doc["url"]: doc for doc in db.pages.find()}
        items = list(db.items.find())
    assert "duplicate_of" not in pages[first.url]
    assert pages[second.url]["duplicate_of"] == first.fp
    assert pages[third_batch.url]["duplicate_of"] == first.fp
    assert "duplicate_of" not in pages[other_job.url]  # dedup is per job
    assert sorted(item["source_url"] for item in items) == sorted([first.url, other_job.url])
    # Every URL is still exported; a duplicate carries the data of the item it points at.
    assert len(exported) == 4 and exported[second.url].data == first.data


async def test_document_over_16_mb_is_stored_truncated_and_flagged(
    mongo_uri: str, tmp_path: Path
) -> None:
    huge_body = os.urandom(17 * 1024 * 1024)  # incompressible: the document would be > 16 MB
    huge = record(1, body=huge_body, content_type="application/octet-stream", data={})
    big_data = record(2, data={"blob": "x" * (17 * 1024 * 1024)})
    normal = record(3)
    store = make_store(mongo_uri, tmp_path, body_max_bytes=64 * 1024 * 1024)
    await store.open()
    try:
        await store.write([huge, big_data, normal])
        back = {r.url: r for r in [r async for r in store.iter_records()]}
    finally:
        await store.close()
    assert store.dead_letters == 0 and set(back) == {huge.url, big_data.url, normal.url}
    kept = back[huge.url].body or b""
    assert 0 < len(kept) < len(huge_body) and huge_body.startswith(kept)
    with sync_db(mongo_uri) as db:
        assert db.pages.find_one({"_id": huge.fp})["body_truncated"] is True
        item = db.items.find_one({"_id": item_id(big_data.fp, big_data.job)})
        assert item["data_truncated"] is True and item["data"] == {}
    assert back[normal.url] == normal


async def test_body_cap_truncates_and_flags(mongo_uri: str, tmp_path: Path) -> None:
    rec = record(1, body=page_html(1, "word " * 5000))
    store = make_store(mongo_uri, tmp_path, body_max_bytes=1000)
    await store.open()
    try:
        await store.write([rec])
        (back,) = [r async for r in store.iter_records()]
    finally:
        await store.close()
    assert back.body == (rec.body or b"")[:1000]
    with sync_db(mongo_uri) as db:
        page = db.pages.find_one({"_id": rec.fp})
    assert page["body_truncated"] is True and page["body_bytes"] == len(rec.body or b"")


async def test_unencodable_record_is_dead_lettered_not_blocking(
    mongo_uri: str, tmp_path: Path
) -> None:
    bad = record(1, data={"n": 2**63 + 5})  # msgpack carries it; BSON stops at int64
    good = [record(i) for i in range(2, 6)]
    store = make_store(mongo_uri, tmp_path)
    await store.open()
    try:
        await store.write([bad, *good])
        assert store.dead_letters == 1
        assert await store.count() == 4
    finally:
        await store.close()


async def test_export_filters_by_job(mongo_uri: str, tmp_path: Path) -> None:
    store = make_store(mongo_uri, tmp_path)
    await store.open()
    try:
        await store.write([record(i, job="a" if i % 2 else "b") for i in range(1200)])
        assert await store.count("a") == 600
        urls = [r.url async for r in store.iter_records("a")]
    finally:
        await store.close()
    assert len(urls) == len(set(urls)) == 600


async def test_records_since_a_time_come_by_fetch_time_across_chunks(
    mongo_uri: str, tmp_path: Path
) -> None:
    # Three pages per fetch time: the chunks' boundaries fall between equal
    # times, which the (fetched_at, _id) keyset must neither skip nor repeat.
    records = [
        record(i, job="a" if i % 2 else "b", fetched_at=1_700_000_000.0 + i // 3)
        for i in range(1500)
    ]
    since = 1_700_000_000.0 + 200
    store = make_store(mongo_uri, tmp_path)
    await store.open()
    try:
        await store.write(records)
        new = [(r.fetched_at, r.url) async for r in store.iter_records(since=since)]
        new_a = [r.url async for r in store.iter_records("a", since)]
    finally:
        await store.close()
    expected = sorted((r.fetched_at, r.url) for r in records if r.fetched_at >= since)
    assert len(new) == len(expected) == 900 and sorted(new) == expected
    assert [at for at, _ in new] == sorted(at for at, _ in new)  # oldest first
    assert sorted(new_a) == sorted(url for at, url in expected if int(url.rsplit("/", 1)[1]) % 2)


async def test_uri_without_database_is_a_clear_error(mongo_uri: str, tmp_path: Path) -> None:
    uri = mongo_uri.split("/nd_")[0] + "/"
    store = make_store(uri, tmp_path)
    with pytest.raises(StoreError, match="names no database"):
        await store.open()


async def test_auth_failure_names_no_password(
    mongo_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "s3cr3t-Pa55"
    host = mongo_uri.split("://", 1)[1].split("/", 1)[0].rpartition("@")[2]
    uri = with_database(f"mongodb://nobody:{secret}@{host}/x", "nd_auth")
    with pytest.raises(StoreError) as raised:
        await make_store(uri, tmp_path).open()
    assert "authentication failed" in str(raised.value) and secret not in str(raised.value)
    assert "nobody:***@" in str(raised.value)

    monkeypatch.setenv("ND_TEST_PW", secret)
    env_uri = with_database(f"mongodb://nobody@{host}/x", "nd_auth")
    with pytest.raises(StoreError, match="authentication failed") as raised:
        await make_store(env_uri, tmp_path, password_env="ND_TEST_PW").open()
    assert secret not in str(raised.value)

    secret_file = tmp_path / "pw"
    secret_file.write_text(secret + "\n")
    with pytest.raises(StoreError, match="authentication failed"):
        await make_store(env_uri, tmp_path, password_file=str(secret_file)).open()

    with pytest.raises(StoreError, match="ND_TEST_MISSING is not set"):
        await make_store(env_uri, tmp_path, password_env="ND_TEST_MISSING").open()


def test_cli_export_from_mongo_and_bad_uri_exit_codes(mongo_uri: str, tmp_path: Path) -> None:
    import asyncio
    import subprocess
    import sys

    async def fill() -> None:
        store = make_store(mongo_uri, tmp_path)
        await store.open()
        try:
            await store.write([record(i) for i in range(3)])
        finally:
            await store.close()

    asyncio.run(fill())
    uri = mongo_uri + ("&" if "?" in mongo_uri else "?") + "serverSelectionTimeoutMS=500"
    run = [sys.executable, "-m", "nadird", "export", "--store"]
    done = subprocess.run([*run, uri], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(rows) == 3 and set(rows[0]) >= {"url", "status", "data", "fetched_at"}

    bad = f"mongodb://u:hunter2@127.0.0.1:{free_port()}/db?serverSelectionTimeoutMS=300"
    done = subprocess.run([*run, bad], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2
    assert "hunter2" not in done.stderr and "u:***@" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


async def test_reader_beside_a_running_master_needs_no_spool(
    mongo_uri: str, tmp_path: Path
) -> None:
    from nadird.store.mongo.spool import Spool

    reader = make_store(mongo_uri, tmp_path)
    await reader.open()
    await reader.write([record(1)])
    await reader.close()
    assert not (tmp_path / "spool.db").exists()  # created only when first needed

    master_spool = Spool(str(tmp_path / "spool.db"), "whatever")
    await master_spool.open()  # held, as by a running master
    try:
        reader = make_store(mongo_uri, tmp_path)
        await reader.open()
        try:
            assert [r.url async for r in reader.iter_records()] == [record(1).url]
            await reader.write([record(2)])  # MongoDB is up: no spool needed
            assert await reader.count() == 2
        finally:
            await reader.close()
    finally:
        await master_spool.close()


async def test_records_are_read_back_by_fingerprint_without_their_bodies(
    mongo_uri: str, tmp_path: Path
) -> None:
    store = make_store(mongo_uri, tmp_path)
    records = [record(i, body=f"<p>{i}</p>".encode(), data={"price": i}) for i in range(4)]
    await store.open()
    try:
        await store.write(records)
        back = await store.records_of([records[1].fp, records[3].fp, bytes(16)])
    finally:
        await store.close()
    assert sorted((r.url, r.data, r.body) for r in back) == [
        (records[1].url, {"price": 1}, None),
        (records[3].url, {"price": 3}, None),
    ]
