"""`export --changes` reads the history in chunks: the same changes as
pairing the whole history in memory, whatever the chunk size, `--since`
and `--job`, in both stores."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.changes_helpers import (
    T0,
    Change,
    Raw,
    _check_against_reference,
    _check_interleaved,
    _empty,
    _interleaved,
    _version,
)
from support.mongo_helpers import make_store, sync_db

from nadird.store.export import iso_utc
from nadird.store.sqlite.store import SqliteStore

# The test server takes ~30 ms a query and 100 ms a write: a shorter
# history, fewer chunk sizes, every third filter.
MONGO_CHUNKS = (3, 1000)


def _raw_mongo(uri: str) -> list[Raw]:
    with sync_db(uri) as db:
        docs = list(db["changes"].find({}))
    return [
        (
            d["job"],
            d["url"],
            d["fetched_at"].replace(tzinfo=dt.UTC).timestamp(),
            d["_id"],
            d["data"],
        )
        for d in docs
    ]


async def test_mongo_changes_in_chunks_equal_the_whole_history_paired(
    mongo_uri: str, tmp_path: Path
) -> None:
    store = make_store(mongo_uri, tmp_path)
    await _check_against_reference(store, lambda: _raw_mongo(mongo_uri), MONGO_CHUNKS, 20, 3)


async def test_mongo_pairs_the_versions_of_each_job_apart(mongo_uri: str, tmp_path: Path) -> None:
    _check_interleaved(*await _interleaved(make_store(mongo_uri, tmp_path)))


async def test_mongo_exports_no_change_from_an_empty_history(
    mongo_uri: str, tmp_path: Path
) -> None:
    assert await _empty(make_store(mongo_uri, tmp_path)) == [[]] * 5


@pytest.mark.slow
async def test_export_changes_since_prints_the_old_value_from_before_since(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    store = SqliteStore(str(path))
    await store.open()
    for n, price in enumerate((299, 259, 249)):
        await store.write([_version(1, "shop", T0 + 100 * n, {"price": price})])
    await store.write([_version(2, "other", T0 + 150, {"price": 5})])
    await store.write([_version(2, "other", T0 + 250, {"price": 6})])
    await store.close()

    def export(*extra: str) -> list[Change]:
        command = [sys.executable, "-m", "nadird", "export", "--changes"]
        command += ["--store", f"sqlite:///{path}", *extra]
        out = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
        return [json.loads(line) for line in out.stdout.splitlines()]

    # Since a moment between the first two versions: the first change after
    # it has the version before it (at T0, 299) as its old side.
    found = export("--since", iso_utc(T0 + 50).removesuffix("Z"), "--job", "shop")
    assert [(c["previous_time"], c["time"], c["changes"]) for c in found] == [
        (iso_utc(T0), iso_utc(T0 + 100), {"price": {"old": 299, "new": 259}}),
        (iso_utc(T0 + 100), iso_utc(T0 + 200), {"price": {"old": 259, "new": 249}}),
    ]
    # Every job, ordered by job, URL, then time.
    assert [(c["job"], c["time"]) for c in export("--since", str(T0 + 200))] == [
        ("other", iso_utc(T0 + 250)),
        ("shop", iso_utc(T0 + 200)),
    ]


async def test_an_older_mongo_database_gets_the_history_indexes_at_open(
    mongo_uri: str, tmp_path: Path
) -> None:
    with sync_db(mongo_uri) as db:  # the indexes of a database written before
        db["changes"].create_index([("url", 1), ("fetched_at", -1)], name="url_time")
        db["changes"].create_index([("fetched_at", 1)], name="time")
    store = make_store(mongo_uri, tmp_path)
    await store.open()
    try:
        await store.write([_version(1, "a", T0, {"p": 1})])
        await store.write([_version(1, "a", T0 + 1, {"p": 2})])
        found = [c async for c in store.iter_changes(since=T0 + 1)]
    finally:
        await store.close()
    assert [c["changes"] for c in found] == [{"p": {"old": 1, "new": 2}}]
    with sync_db(mongo_uri) as db:
        names = set(db["changes"].index_information())
    assert names == {"_id_", "job_url_time", "time_id"}
