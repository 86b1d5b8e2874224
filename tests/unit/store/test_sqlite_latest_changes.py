"""The latest changes a SQLite store lists, newest first."""

from __future__ import annotations

from pathlib import Path

from support.revisit_history_helpers import _latest_changes

from nadird.store.sqlite.store import SqliteStore


async def test_sqlite_lists_its_latest_changes_newest_first(tmp_path: Path) -> None:
    await _latest_changes(SqliteStore(str(tmp_path / "s.db")))
