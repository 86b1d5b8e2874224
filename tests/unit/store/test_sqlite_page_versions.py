"""Page history in a SQLite store: a version per change, none twice."""

from __future__ import annotations

from pathlib import Path

from support.page_versions_helpers import _check, _history

from nadird.store.sqlite.store import SqliteStore


async def test_sqlite_keeps_a_version_per_change(tmp_path: Path) -> None:
    _check(await _history(SqliteStore(str(tmp_path / "s.db"))))
