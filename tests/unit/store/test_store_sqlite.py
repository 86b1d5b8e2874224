"""SqliteStore, open_store and export_records against real SQLite files."""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import json
import sqlite3
import time
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from nadird.common.errors import StoreError
from nadird.store.base import PageRecord
from nadird.store.export import export_records
from nadird.store.open import open_store
from nadird.store.sqlite.store import CHUNK_ROWS, SqliteStore
from nadird.store.uri import describe_store_uri


def fingerprint(url: str) -> bytes:
    return hashlib.blake2b(url.encode(), digest_size=16).digest()


def make_record(n: int, job: str = "news", **changes: Any) -> PageRecord:
    url = f"https://example.com/page/{n}"
    record = PageRecord(
        fp=fingerprint(url),
        url=url,
        final_url=url,
        status=200,
        fetched_at=1_700_000_000.25 + n,
        job=job,
        depth=n % 4,
        content_type="text/html",
    )
    for name, value in changes.items():
        setattr(record, name, value)
    return record


async def read_all(store: SqliteStore, job: str | None = None) -> list[PageRecord]:
    return [record async for record in store.iter_records(job)]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "crawl.db"


@pytest.fixture
async def store(db_path: Path) -> AsyncIterator[SqliteStore]:
    opened = SqliteStore(str(db_path))
    await opened.open()
    yield opened
    await opened.close()


# --- SqliteStore -----------------------------------------------------------


async def test_round_trip_keeps_every_field(store: SqliteStore) -> None:
    full = make_record(
        1,
        data={"title": "Ünïcode ✓", "tags": ["a", "b"], "price": 9.5},
        checksum="sha1:abc",
        body=b"<html>" + b"x" * 5000 + b"</html>",
        redirects=["http://example.com/page/1", "https://example.com/p/1"],
        node="worker-3",
    )
    bare = make_record(2, status=0, content_type=None, error="timeout: read")
    empty_body = make_record(3, body=b"")

    await store.write([full, bare, empty_body])

    assert await read_all(store) == [full, bare, empty_body]


async def test_body_is_zlib_compressed_on_disk(store: SqliteStore, db_path: Path) -> None:
    body = b"<p>hello</p>" * 1000
    await store.write([make_record(1, body=body), make_record(2)])

    raw = sqlite3.connect(db_path)
    try:
        rows = raw.execute("SELECT body FROM pages ORDER BY url").fetchall()
    finally:
        raw.close()
    assert zlib.decompress(rows[0][0]) == body
    assert len(rows[0][0]) < len(body) // 10
    assert rows[1][0] is None


async def test_upsert_by_fingerprint_keeps_one_row_with_newer_values(store: SqliteStore) -> None:
    old = make_record(1, status=503, data={"title": "old"}, body=b"old", error="http 503")
    new = make_record(1, status=200, data={"title": "new"}, body=None, node="w2")
    await store.write([old, make_record(2)])

    await store.write([new])

    assert await store.count() == 2
    assert [r for r in await read_all(store) if r.fp == new.fp] == [new]


async def test_duplicate_fingerprints_within_one_batch_keep_the_last(store: SqliteStore) -> None:
    first, last = make_record(1, status=500), make_record(1, status=200)

    await store.write([first, last])

    assert await read_all(store) == [last]


async def test_count_and_iterate_by_job(store: SqliteStore) -> None:
    await store.write([make_record(n, job="a" if n % 3 else "b") for n in range(30)])

    assert await store.count() == 30
    assert await store.count("a") == 20
    assert await store.count("b") == 10
    assert await store.count("missing") == 0
    assert {r.job for r in await read_all(store, "b")} == {"b"}
    assert len(await read_all(store, "b")) == 10


async def test_pages_added_counts_new_fingerprints_only(store: SqliteStore) -> None:
    await store.write([make_record(n) for n in range(1500)])  # more than one IN (...) query
    await store.write([make_record(n) for n in range(1400, 1600)])  # 100 of them new
    await store.write([make_record(2000), make_record(2000)])  # one page, twice in a batch
    assert store.pages_added == 1601 == await store.count()


async def test_empty_write_is_a_no_op(store: SqliteStore) -> None:
    await store.write([])

    assert await store.count() == 0
    assert await read_all(store) == []


async def test_write_is_committed_when_it_returns(store: SqliteStore, db_path: Path) -> None:
    await store.write([make_record(n) for n in range(3)])

    # A second, independent connection sees the rows while the store is open.
    raw = sqlite3.connect(db_path)
    try:
        assert raw.execute("SELECT count(*) FROM pages").fetchone() == (3,)
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        raw.close()


async def test_rows_survive_close_and_reopen(db_path: Path) -> None:
    records = [make_record(n, data={"n": n}) for n in range(10)]
    first = SqliteStore(str(db_path))
    await first.open()
    await first.write(records)
    await first.close()

    second = SqliteStore(str(db_path))
    await second.open()
    try:
        assert await second.count() == 10
        assert await read_all(second) == records
    finally:
        await second.close()


async def test_big_write_in_one_call_and_repeated_iteration(store: SqliteStore) -> None:
    records = [make_record(n, job=f"j{n % 2}", body=b"b%d" % n) for n in range(5000)]
    assert len(records) > 4 * CHUNK_ROWS  # iteration really spans several chunks

    await store.write(records)

    assert await store.count() == 5000
    for _ in range(2):
        assert await read_all(store) == records
    assert await read_all(store, "j1") == records[1::2]


async def test_open_creates_missing_parent_directories(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "crawl.db"
    store = SqliteStore(str(path))
    await store.open()
    await store.close()

    assert path.is_file()


async def test_open_and_close_are_idempotent(db_path: Path) -> None:
    store = SqliteStore(str(db_path))
    await store.open()
    await store.open()
    await store.write([make_record(1)])
    await store.close()
    await store.close()

    await store.open()  # and a closed store can be opened again
    assert await store.count() == 1
    await store.close()


async def test_use_before_open_raises_store_error(db_path: Path) -> None:
    store = SqliteStore(str(db_path))

    with pytest.raises(StoreError, match="not open"):
        await store.count()
    with pytest.raises(StoreError, match="not open"):
        await store.write([make_record(1)])


async def test_garbage_file_raises_store_error_naming_the_path(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is certainly not a SQLite database\n" * 100)
    store = SqliteStore(str(path))

    with pytest.raises(StoreError) as caught:
        await store.open()

    assert str(path) in str(caught.value)
    await store.close()  # harmless after a failed open


async def test_unwritable_location_raises_store_error_naming_the_path(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    path = blocker / "crawl.db"

    with pytest.raises(StoreError) as caught:
        await SqliteStore(str(path)).open()

    assert str(path) in str(caught.value)


async def test_newer_schema_version_is_refused(db_path: Path) -> None:
    store = SqliteStore(str(db_path))
    await store.open()
    await store.close()
    raw = sqlite3.connect(db_path)
    with raw:
        raw.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    raw.close()

    with pytest.raises(StoreError, match="schema version 99"):
        await SqliteStore(str(db_path)).open()


async def test_unserializable_data_raises_store_error(store: SqliteStore) -> None:
    with pytest.raises(StoreError, match="page/1"):
        await store.write([make_record(1, data={"when": object()})])

    assert await store.count() == 0


async def test_big_write_does_not_block_the_event_loop(store: SqliteStore) -> None:
    # One 10 KB HTML-like body shared by all records keeps the test's own memory
    # small; the store still compresses and writes it 20,000 times.
    body = (b"<div class='item'>lorem ipsum dolor sit amet</div>\n" * 250)[:10_240]
    records = [make_record(n, body=body) for n in range(20_000)]
    gaps: list[float] = []
    writing = True

    async def ticker() -> None:
        last = time.perf_counter()
        while writing:
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticking = asyncio.create_task(ticker())
    started = time.perf_counter()
    await store.write(records)
    took = time.perf_counter() - started
    writing = False
    await ticking

    assert await store.count() == 20_000
    # Had the write run on the loop, one gap would span (nearly) all of it.
    assert len(gaps) >= 10, (took, gaps)
    assert max(gaps) < max(took / 3, 0.05), (took, max(gaps))


# --- open_store / describe_store_uri ----------------------------------------


@pytest.mark.parametrize(
    ("uri", "path"),
    [
        ("sqlite:///crawl.db", "crawl.db"),
        ("sqlite:///data/crawl.db", "data/crawl.db"),
        ("sqlite:////var/lib/nadird/crawl.db", "/var/lib/nadird/crawl.db"),
        ("SQLite:///Crawl.DB", "Crawl.DB"),
        ("sqlite:///no-suffix-needed", "no-suffix-needed"),
        ("crawl.db", "crawl.db"),
        ("out/crawl.sqlite", "out/crawl.sqlite"),
        ("/abs/crawl.sqlite3", "/abs/crawl.sqlite3"),
    ],
)
def test_open_store_sqlite_forms(uri: str, path: str) -> None:
    store = open_store(uri)

    assert isinstance(store, SqliteStore)
    assert store.path == path


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("postgres://crawler:s3cret@db/nadird", "unsupported store URI"),
        ("crawl.txt", "unsupported store URI 'crawl.txt'"),
        ("", "unsupported store URI ''"),
        ("sqlite://crawl.db", "unsupported store URI"),
        ("sqlite:///", "bad SQLite store URI"),
        ("sqlite:///data/", "bad SQLite store URI"),
        ("sqlite:///crawl.db?mode=ro", "bad SQLite store URI"),
    ],
)
def test_open_store_rejects(uri: str, message: str) -> None:
    with pytest.raises(StoreError, match=message) as caught:
        open_store(uri)

    assert "s3cret" not in str(caught.value)
    if message.startswith("unsupported"):
        assert "sqlite:///" in str(caught.value)  # the accepted forms are listed


@pytest.mark.parametrize(
    ("uri", "shown"),
    [
        ("mongodb://u:pw@h:27017/db", "mongodb://u:***@h:27017/db"),
        ("mongodb://u:p%40ss@h1,h2/db?replicaSet=rs", "mongodb://u:***@h1,h2/db?replicaSet=rs"),
        ("mongodb://u:pw@h", "mongodb://u:***@h"),
        ("mongodb://u@h/db", "mongodb://u@h/db"),
        ("mongodb://h/db", "mongodb://h/db"),
        ("sqlite:///crawl.db", "sqlite:///crawl.db"),
        ("crawl.db", "crawl.db"),
    ],
)
def test_describe_store_uri_hides_passwords(uri: str, shown: str) -> None:
    assert describe_store_uri(uri) == shown


# --- export_records ---------------------------------------------------------


@pytest.fixture
async def small_store(store: SqliteStore) -> SqliteStore:
    await store.write(
        [
            make_record(
                1,
                data={"title": 'Zürich, "quoted"', "tags": ["x", "y"]},
                checksum="c1",
                body=b"<html/>",
                redirects=["http://example.com/page/1"],
            ),
            make_record(
                2,
                job="other",
                data={"author": "Ann", "url": "https://elsewhere.example/"},
                content_type=None,
            ),
            make_record(3, status=404, error="http 404\nNot Found"),
        ]
    )
    return store


async def test_export_jsonl_exact(small_store: SqliteStore) -> None:
    out = io.StringIO()

    rows = await export_records(small_store, out, "jsonl")

    assert rows == 3
    lines = out.getvalue().splitlines()
    assert lines[0] == (
        '{"url":"https://example.com/page/1","final_url":"https://example.com/page/1",'
        '"status":200,"fetched_at":1700000001.25,"job":"news","depth":1,'
        '"content_type":"text/html","checksum":"c1","error":null,'
        '"redirects":["http://example.com/page/1"],"canonical":null,"rendered":false,'
        '"headers":{},"item_key":null,"fallback_from":null,"method":"GET","meta":{},'
        '"near_duplicate_of":null,"data":{"title":"Zürich, \\"quoted\\"","tags":["x","y"]}}'
    )
    for line in lines:
        parsed = json.loads(line)
        for key in ("url", "final_url", "status", "fetched_at", "job", "depth", "data"):
            assert key in parsed
    assert [json.loads(line)["status"] for line in lines] == [200, 200, 404]


async def test_export_jsonl_by_job(small_store: SqliteStore) -> None:
    out = io.StringIO()

    assert await export_records(small_store, out, "jsonl", job="other") == 1
    assert json.loads(out.getvalue())["data"]["author"] == "Ann"


async def test_export_csv_exact(small_store: SqliteStore) -> None:
    out = io.StringIO()

    rows = await export_records(small_store, out, "csv")

    assert rows == 3
    assert out.getvalue() == (
        "url,final_url,status,fetched_at,job,depth,content_type,checksum,error,"
        "redirects,canonical,rendered,headers,item_key,fallback_from,method,meta,"
        "near_duplicate_of,author,tags,title,data.url\n"
        "https://example.com/page/1,https://example.com/page/1,200,2023-11-14T22:13:21.250Z,"
        'news,1,text/html,c1,,"[""http://example.com/page/1""]",,false,{},,,GET,{},,,'
        '"[""x"",""y""]","Zürich, ""quoted""",\n'
        "https://example.com/page/2,https://example.com/page/2,200,2023-11-14T22:13:22.250Z,"
        "other,2,,,,[],,false,{},,,GET,{},,Ann,,,https://elsewhere.example/\n"
        "https://example.com/page/3,https://example.com/page/3,404,2023-11-14T22:13:23.250Z,"
        'news,3,text/html,,"http 404\nNot Found",[],,false,{},,,GET,{},,,,,\n'
    )
    parsed = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert parsed[0]["title"] == 'Zürich, "quoted"'
    assert parsed[2]["error"] == "http 404\nNot Found"


async def test_export_csv_by_job_uses_that_jobs_fields(small_store: SqliteStore) -> None:
    out = io.StringIO()

    assert await export_records(small_store, out, "csv", job="news") == 2
    line = out.getvalue().splitlines()[0]
    assert line.endswith(",headers,item_key,fallback_from,method,meta,near_duplicate_of,tags,title")


async def test_export_empty_store(store: SqliteStore) -> None:
    jsonl, table = io.StringIO(), io.StringIO()

    assert await export_records(store, jsonl, "jsonl") == 0
    assert await export_records(store, table, "csv") == 0
    assert jsonl.getvalue() == ""
    assert table.getvalue() == (
        "url,final_url,status,fetched_at,job,depth,content_type,checksum,error,"
        "redirects,canonical,rendered,headers,item_key,fallback_from,method,meta,near_duplicate_of\n"
    )


async def test_a_version_1_store_is_migrated_and_keeps_its_rows(tmp_path: Path) -> None:
    import sqlite3

    from nadird.store.base import PageRecord
    from nadird.store.sqlite.store import SqliteStore

    path = tmp_path / "old.db"
    store = SqliteStore(str(path))
    await store.open()
    await store.write(
        [
            PageRecord(
                fp=b"\x01" * 16,
                url="http://a.test/",
                final_url="http://a.test/",
                status=200,
                fetched_at=1.0,
                job="j",
                depth=0,
            )
        ]
    )
    await store.close()
    with sqlite3.connect(path) as conn:  # what a version-1 file looked like
        conn.execute("ALTER TABLE pages DROP COLUMN canonical")
        conn.execute("ALTER TABLE pages DROP COLUMN rendered")
        conn.execute("ALTER TABLE pages DROP COLUMN headers")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    store = SqliteStore(str(path))
    await store.open()
    await store.write(
        [
            PageRecord(
                fp=b"\x02" * 16,
                url="http://a.test/b",
                final_url="http://a.test/b",
                status=200,
                fetched_at=2.0,
                job="j",
                depth=1,
                canonical="http://a.test/",
                rendered=True,
                headers={"etag": '"1"'},
            )
        ]
    )
    rows = {r.url: (r.canonical, r.rendered, r.headers) async for r in store.iter_records()}
    await store.close()
    assert rows == {
        "http://a.test/": (None, False, {}),
        "http://a.test/b": ("http://a.test/", True, {"etag": '"1"'}),
    }


async def test_records_are_read_back_by_fingerprint_without_their_bodies(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "store.db"))
    await store.open()
    try:
        records = [make_record(n, body=b"<html/>", data={"price": n}) for n in range(1200)]
        await store.write(records)
        wanted = [r.fp for r in records[::2]] + [bytes(16)]  # more than one query's worth
        back = await store.records_of(wanted)
    finally:
        await store.close()
    assert sorted(r.data["price"] for r in back) == list(range(0, 1200, 2))
    assert {r.body for r in back} == {None} and back[0].job == "news"
