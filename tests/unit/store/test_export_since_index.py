"""`nadird export --since` / `--cursor` on SQLite: the store finds what was
fetched since a time through an index on the fetch time (made at the first
open of an older store too), page by page across equal times, and the
export writes exactly the records fetched since."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

from support.cli_helpers import nadird
from support.export_records import record

from nadird.store.base import PageRecord
from nadird.store.sqlite.store import CHUNK_ROWS, SELECT_SINCE, SqliteStore

T0 = record(0).fetched_at


def _records() -> list[PageRecord]:
    # Three pages per fetch time: chunk boundaries fall between equal times.
    return [
        record(n, fetched_at=T0 + n // 3, job="a" if n % 2 else "b") for n in range(3 * CHUNK_ROWS)
    ]


def _fill(path: Path, records: list[PageRecord]) -> None:
    async def fill() -> None:
        store = SqliteStore(str(path))
        await store.open()
        await store.write(records)
        await store.close()

    asyncio.run(fill())


def _since(path: Path, job: str | None, since: float) -> list[PageRecord]:
    async def read() -> list[PageRecord]:
        store = SqliteStore(str(path))
        await store.open()
        try:
            return [r async for r in store.iter_records(job, since)]
        finally:
            await store.close()

    return asyncio.run(read())


def test_records_since_a_time_come_oldest_first_across_chunks(tmp_path: Path) -> None:
    records = _records()
    _fill(tmp_path / "crawl.db", records)
    since = T0 + 100
    new = _since(tmp_path / "crawl.db", None, since)
    expected = [r for r in records if r.fetched_at >= since]
    assert len(new) == len(expected) > CHUNK_ROWS
    assert sorted(r.url for r in new) == sorted(r.url for r in expected)  # none twice
    assert [r.fetched_at for r in new] == sorted(r.fetched_at for r in new)
    only_a = _since(tmp_path / "crawl.db", "a", since)
    assert sorted(r.url for r in only_a) == sorted(r.url for r in expected if r.job == "a")


def test_an_older_store_gets_the_index_and_the_query_uses_it(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    _fill(path, _records())
    with sqlite3.connect(path) as db:  # a store from before the index
        db.execute("DROP INDEX pages_fetched_at")
    db.close()
    since = T0 + 400
    store = f"sqlite:///{path}"
    proc = nadird("export", "--store", store, "--since", repr(since), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(lines) == sum(r.fetched_at >= since for r in _records()) == 3 * CHUNK_ROWS - 1200
    with sqlite3.connect(path) as db:
        names = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
        assert "pages_fetched_at" in names  # made again by the export's open
        for job in (None, "a"):
            sql = SELECT_SINCE.format(job="" if job is None else " AND +job = ?")
            args = (since, -1, *([job] if job else []), 10)
            plan = " ".join(str(row[3]) for row in db.execute("EXPLAIN QUERY PLAN " + sql, args))
            assert "USING INDEX pages_fetched_at" in plan and "TEMP B-TREE" not in plan, plan
    db.close()
