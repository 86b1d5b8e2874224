"""`export --changes` from a SQLite store reads the history in chunks: the same
changes as pairing the whole history in memory, whatever the chunk size."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from support.changes_helpers import (
    T0,
    Raw,
    _check_against_reference,
    _check_interleaved,
    _empty,
    _interleaved,
    _version,
)

from nadird.store.sqlite.store import SqliteStore

CHUNKS = (1, 2, 3, 7, 1000)


def _raw_sqlite(path: Path) -> list[Raw]:
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT job, url, fetched_at, id, data FROM changes").fetchall()
    return [(j, u, t, i, json.loads(d)) for j, u, t, i, d in rows]


async def test_sqlite_changes_in_chunks_equal_the_whole_history_paired(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    await _check_against_reference(SqliteStore(str(path)), lambda: _raw_sqlite(path), CHUNKS)


async def test_sqlite_pairs_the_versions_of_each_job_apart(tmp_path: Path) -> None:
    _check_interleaved(*await _interleaved(SqliteStore(str(tmp_path / "s.db"))))


async def test_sqlite_exports_no_change_from_an_empty_history(tmp_path: Path) -> None:
    assert await _empty(SqliteStore(str(tmp_path / "s.db"))) == [[]] * 5


async def test_an_older_sqlite_store_gets_the_job_url_index_at_open(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SqliteStore(str(path))
    await store.open()
    await store.write([_version(1, "a", T0, {"p": 1}), _version(2, "a", T0 + 1, {"p": 1})])
    await store.write([_version(1, "a", T0 + 2, {"p": 2})])
    await store.close()
    with sqlite3.connect(path) as db:  # the indexes of a store written before
        db.execute("DROP INDEX changes_job_url")
        db.execute("CREATE INDEX changes_url ON changes (url, fetched_at)")
    store = SqliteStore(str(path))
    await store.open()
    try:
        found = [c async for c in store.iter_changes()]
    finally:
        await store.close()
    assert [(c["time"], c["changes"]) for c in found] == [(T0 + 2, {"p": {"old": 1, "new": 2}})]
    with sqlite3.connect(path) as db:
        names = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert "changes_job_url" in names and "changes_url" not in names


async def test_an_export_stopped_early_leaves_the_sqlite_store_usable(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "s.db"))
    await store.open()
    try:
        for n in range(6):
            await store.write([_version(1, "a", T0 + n, {"p": n})])
        changes = store.iter_changes(chunk=2)
        first = await anext(changes)  # the next chunk is being read meanwhile
        await changes.aclose()
        await store.write([_version(1, "a", T0 + 9, {"p": 9})])
        every = [c async for c in store.iter_changes(chunk=2)]
    finally:
        await store.close()
    assert first == every[0] and [c["time"] - T0 for c in every] == [1, 2, 3, 4, 5, 9]
