"""History retention on SQLite, in-process: keep_for and keep_versions with
a clock the test sets, in steps of a few versions, never a URL's latest."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from support.retention_helpers import check_retention

import nadird.store.sqlite.trim as sqlite_trim
from nadird.store.retention import Keep, TrimStep, doomed, plan_step
from nadird.store.sqlite.store import SqliteStore


async def test_sqlite_history_is_trimmed_to_the_jobs_retention(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_trim, "URLS_PER_STEP", 2)  # rounds over several steps
    path = tmp_path / "h.db"

    def read() -> list[tuple[str, float]]:
        with sqlite3.connect(path) as conn:
            return conn.execute("SELECT url, fetched_at FROM changes").fetchall()

    store = SqliteStore(str(path))
    await store.open()
    try:
        await check_retention(store, read)
    finally:
        await store.close()


def test_the_latest_version_stays_whatever_the_rules() -> None:
    newest_first = [("c", 5.0), ("b", 3.0), ("a", 1.0)]
    assert doomed(newest_first, Keep("j", before=100.0)) == ["b", "a"]
    assert doomed(newest_first, Keep("j", versions=1)) == ["b", "a"]
    assert doomed(newest_first, Keep("j", versions=2)) == ["a"]
    assert doomed(newest_first, Keep("j", before=2.0, versions=5)) == ["a"]
    assert doomed([("only", 0.0)], Keep("j", before=1e12, versions=1)) == []


def test_a_step_stops_inside_a_url_and_the_next_one_goes_on_there() -> None:
    by_url = [("u1", [1, 2]), ("u2", [3, 4, 5]), ("u3", [])]
    assert plan_step(by_url, None, 3, full=True) == ([1, 2, 3], TrimStep(3, "u1"))
    assert plan_step(by_url, None, 10, full=True) == ([1, 2, 3, 4, 5], TrimStep(5, "u3"))
    assert plan_step(by_url, "u0", 10, full=False) == ([1, 2, 3, 4, 5], TrimStep(5, None))
    assert plan_step([("u1", [1, 2])], None, 1, full=False) == ([1], TrimStep(1, ""))
