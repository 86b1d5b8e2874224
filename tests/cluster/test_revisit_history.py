"""Page history in both stores: a version per change, none twice, the diffs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from support.mongo_helpers import make_store, record, sync_db
from support.revisit_history_helpers import _latest_changes

from nadird.store.backend import Store
from nadird.store.base import PageRecord
from nadird.store.sqlite.store import SqliteStore


def _version(price: int, at: float, signature: str) -> PageRecord:
    base = record(1, job="shop", data={"title": "Kettle", "price": price})
    return dataclasses.replace(base, fetched_at=at, signature=signature)


async def _history(store: Store) -> list[dict[str, object]]:
    await store.open()
    try:
        plain = dataclasses.replace(record(2, job="shop"), signature=None)  # not revisited
        await store.write([_version(299, 100.0, "a"), plain])
        await store.write([_version(299, 200.0, "a")])  # unchanged: no version
        # A change, and the same page again (a refetch after a crash): one version.
        await store.write([_version(259, 300.0, "b")])
        await store.write([_version(259, 301.0, "b"), _version(249, 400.0, "c")])
        return [c async for c in store.iter_changes()]  # type: ignore[attr-defined]
    finally:
        await store.close()


def _check(changes: list[dict[str, object]]) -> None:
    assert [(c["previous_time"], c["time"], c["changes"]) for c in changes] == [
        (100.0, 300.0, {"price": {"old": 299, "new": 259}}),
        (300.0, 400.0, {"price": {"old": 259, "new": 249}}),
    ]


async def test_sqlite_keeps_a_version_per_change(tmp_path: Path) -> None:
    _check(await _history(SqliteStore(str(tmp_path / "s.db"))))


async def test_mongo_keeps_a_version_per_change(mongo_uri: str, tmp_path: Path) -> None:
    _check(await _history(make_store(mongo_uri, tmp_path)))
    with sync_db(mongo_uri) as db:
        assert db["changes"].count_documents({}) == 3
        names = {index["name"] for index in db["changes"].list_indexes()}
    assert {"job_url_time", "time_id"} <= names
    assert not {"url_time", "time"} & names  # replaced by those two


async def test_mongo_lists_its_latest_changes_newest_first(mongo_uri: str, tmp_path: Path) -> None:
    await _latest_changes(make_store(mongo_uri, tmp_path))
