"""`export --changes` reads the history in chunks: the same changes as
pairing the whole history in memory, whatever the chunk size, `--since`
and `--job`, in both stores."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import random
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from itertools import groupby, pairwise
from pathlib import Path
from typing import Any

import pytest
from support.mongo_helpers import make_store, record, sync_db

from nadird.store.base import PageRecord
from nadird.store.export import iso_utc
from nadird.store.history import field_changes
from nadird.store.sqlite.store import SqliteStore

Change = dict[str, Any]
# (job, url, time, tie-break, data): a stored version, as read back raw.
Raw = tuple[str, str, float, Any, dict[str, Any]]
T0 = 1_700_000_000.0
CHUNKS = (1, 2, 3, 7, 1000)
# The test server takes ~30 ms a query and 100 ms a write: a shorter
# history, fewer chunk sizes, every third filter.
MONGO_CHUNKS = (3, 1000)


def _version(url_no: int, job: str, at: float, data: dict[str, Any]) -> PageRecord:
    base = record(url_no, job=job, data=data)
    return dataclasses.replace(base, fetched_at=at, signature=json.dumps(data, sort_keys=True))


def _random_history(seed: int, count: int) -> list[list[PageRecord]]:
    """`count` batches of versions: 12 URLs, some in two jobs whose versions
    interleave in time, some with two versions at one time; most fetches
    change a field, some change nothing (no version)."""
    rng = random.Random(seed)
    batches: list[list[PageRecord]] = []
    clock = T0
    for _ in range(count):
        batch = []
        for _ in range(rng.randint(1, 6)):
            clock += rng.choice((0.0, 0.25, 1.0, 7.5))  # 0: a tie with the one before
            job = rng.choice(("a", "a", "b"))
            data = {"price": rng.randint(1, 3), "title": rng.choice(("K", "L"))}
            batch.append(_version(rng.randint(0, 11), job, clock, data))
        batches.append(batch)
    return batches


def _reference(raw: list[Raw], job: str | None, since: float | None) -> list[Change]:
    """What the export must print: the whole history in memory, each version
    paired with the one before it of its job and URL."""
    found: list[Change] = []
    chosen = sorted(v for v in raw if job is None or v[0] == job)
    for _, group in groupby(chosen, key=lambda v: (v[0], v[1])):
        versions = list(group)
        for old, new in pairwise(versions):
            if since is None or new[2] >= since:
                found.append(
                    {
                        "url": new[1],
                        "job": new[0],
                        "time": new[2],
                        "previous_time": old[2],
                        "changes": field_changes(old[4], new[4]),
                    }
                )
    return found


def _raw_sqlite(path: Path) -> list[Raw]:
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT job, url, fetched_at, id, data FROM changes").fetchall()
    return [(j, u, t, i, json.loads(d)) for j, u, t, i, d in rows]


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


def _filters(raw: list[Raw]) -> list[tuple[str | None, float | None]]:
    """Jobs and times to filter on: none, each job, a job with no versions;
    before everything, a version's own time (`since` keeps it), between two
    times, after everything."""
    times = sorted({v[2] for v in raw})
    middle = times[len(times) // 2]
    sinces = [None, T0 - 1, middle, middle + 0.125, times[-1] + 1]
    return [(job, since) for job in (None, "a", "b", "none") for since in sinces]


async def _check_against_reference(
    store: Any,
    raw_of: Callable[[], list[Raw]],
    chunks: tuple[int, ...],
    batches: int = 40,
    step: int = 1,
) -> None:
    await store.open()
    try:
        for batch in _random_history(7, batches):
            await store.write(batch)
        raw = raw_of()
        assert len(raw) > batches and len({(v[0], v[1]) for v in raw}) > 12  # URLs in both jobs
        for job, since in _filters(raw)[::step]:
            expected = _reference(raw, job, since)
            for chunk in chunks:
                found = [c async for c in store.iter_changes(job, since, chunk=chunk)]
                assert found == expected, (job, since, chunk)
    finally:
        await store.close()


async def test_sqlite_changes_in_chunks_equal_the_whole_history_paired(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    await _check_against_reference(SqliteStore(str(path)), lambda: _raw_sqlite(path), CHUNKS)


async def test_mongo_changes_in_chunks_equal_the_whole_history_paired(
    mongo_uri: str, tmp_path: Path
) -> None:
    store = make_store(mongo_uri, tmp_path)
    await _check_against_reference(store, lambda: _raw_mongo(mongo_uri), MONGO_CHUNKS, 20, 3)


async def _interleaved(store: Any) -> list[list[Change]]:
    """One URL crawled by two jobs, their versions alternating in time; the
    chunk boundary (2 versions) falls inside each job's versions."""
    await store.open()
    try:
        for n, job in enumerate(("a", "b", "a", "b", "a")):
            await store.write([_version(1, job, T0 + n, {"price": n})])
        return [
            [c async for c in store.iter_changes(job, since, chunk=2)]
            for job, since in ((None, None), ("b", None), (None, T0 + 4))
        ]
    finally:
        await store.close()


def _check_interleaved(every: list[Change], of_b: list[Change], latest: list[Change]) -> None:
    # Each job's versions paired among themselves, job by job (reading by
    # URL then time alone would pair a's with b's and find no change).
    assert [(c["job"], c["previous_time"] - T0, c["time"] - T0) for c in every] == [
        ("a", 0, 2),
        ("a", 2, 4),
        ("b", 1, 3),
    ]
    assert of_b == every[2:] and of_b[0]["changes"] == {"price": {"old": 1, "new": 3}}
    # --since: the old side is the version before `since`, of the same job.
    assert latest == every[1:2] and latest[0]["changes"] == {"price": {"old": 2, "new": 4}}


async def test_sqlite_pairs_the_versions_of_each_job_apart(tmp_path: Path) -> None:
    _check_interleaved(*await _interleaved(SqliteStore(str(tmp_path / "s.db"))))


async def test_mongo_pairs_the_versions_of_each_job_apart(mongo_uri: str, tmp_path: Path) -> None:
    _check_interleaved(*await _interleaved(make_store(mongo_uri, tmp_path)))


async def _empty(store: Any) -> list[list[Change]]:
    await store.open()
    try:
        once = _version(1, "a", T0, {"price": 1})  # a first version is no change
        found = [[c async for c in store.iter_changes()]]
        await store.write([once])
        for job, since in ((None, None), ("a", T0 - 10), ("a", T0), ("b", None)):
            found.append([c async for c in store.iter_changes(job, since, chunk=1)])
        return found
    finally:
        await store.close()


async def test_sqlite_exports_no_change_from_an_empty_history(tmp_path: Path) -> None:
    assert await _empty(SqliteStore(str(tmp_path / "s.db"))) == [[]] * 5


async def test_mongo_exports_no_change_from_an_empty_history(
    mongo_uri: str, tmp_path: Path
) -> None:
    assert await _empty(make_store(mongo_uri, tmp_path)) == [[]] * 5


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
