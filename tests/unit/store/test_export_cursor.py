"""`nadird export --cursor FILE` as a downstream indexer polls it, on a real
SQLite store: each record fetched is written once, late-stored ones too, a
page fetched again is written again, and a bad cursor file is refused."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from support.cli_helpers import nadird
from support.export_records import record

from nadird.store.base import PageRecord
from nadird.store.sqlite.store import SqliteStore


def _write(path: Path, records: list[PageRecord]) -> None:
    async def fill() -> None:
        store = SqliteStore(str(path))
        await store.open()
        await store.write(records)
        await store.close()

    asyncio.run(fill())


def _poll(tmp_path: Path, *extra: str) -> list[str]:
    store = f"sqlite:///{tmp_path / 'crawl.db'}"
    proc = nadird("export", "--store", store, "--cursor", "seen.json", *extra, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line)["url"] for line in proc.stdout.splitlines()]


def test_each_record_is_written_once_late_ones_and_refetches_included(tmp_path: Path) -> None:
    db = tmp_path / "crawl.db"
    _write(db, [record(0), record(1)])
    assert _poll(tmp_path) == ["https://example.com/0", "https://example.com/1"]
    assert _poll(tmp_path) == []  # nothing new
    # One fetched after the last written, one fetched before it but stored
    # only now (results travel), and page 0 fetched again.
    refetch = record(0, fetched_at=record(1).fetched_at + 30)
    _write(db, [record(2), record(9, fetched_at=record(1).fetched_at - 0.5), refetch])
    assert sorted(_poll(tmp_path)) == [f"https://example.com/{n}" for n in (0, 2, 9)]
    assert _poll(tmp_path) == []


def test_a_new_cursor_starts_from_since_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    _write(tmp_path / "crawl.db", [record(0), record(1)])
    assert _poll(tmp_path, "--since", str(record(1).fetched_at)) == ["https://example.com/1"]
    (tmp_path / "seen.json").write_text("{not json")
    store = f"sqlite:///{tmp_path / 'crawl.db'}"
    proc = nadird("export", "--store", store, "--cursor", "seen.json", cwd=tmp_path)
    assert proc.returncode == 2 and "--cursor" in proc.stderr and "seen.json" in proc.stderr
    proc = nadird("export", "--store", store, "--cursor", "c.json", "--changes", cwd=tmp_path)
    assert proc.returncode == 2 and "--cursor: records only" in proc.stderr
