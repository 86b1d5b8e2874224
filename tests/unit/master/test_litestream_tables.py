"""Litestream's tables made before it starts: its own setup statements then
need no write lock, which a busy master holds nearly all the time."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from nadird.master.state.litestream_tables import TABLES


def test_made_by_their_own_process_litestreams_setup_runs_under_a_writers_lock(
    tmp_path: Path,
) -> None:
    path = tmp_path / "frontier.db"
    master = sqlite3.connect(path, isolation_level=None)
    master.execute("PRAGMA journal_mode=WAL")
    master.execute("CREATE TABLE queue (url TEXT)")
    module = "nadird.master.state.litestream_tables"
    done = subprocess.run([sys.executable, "-m", module, str(path)], capture_output=True)
    assert done.returncode == 0, done.stderr
    master.execute("BEGIN")
    master.execute("INSERT INTO queue VALUES ('http://a.test/')")  # the master's open write
    litestream = sqlite3.connect(path, isolation_level=None, timeout=0.1)
    for statement in TABLES:
        litestream.execute(statement)  # no SQLITE_BUSY: nothing to create
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        litestream.execute("CREATE TABLE IF NOT EXISTS other (id INTEGER)")  # what it was
    master.execute("COMMIT")


def test_a_database_it_cannot_write_is_named_and_the_status_is_1(tmp_path: Path) -> None:
    missing_dir = tmp_path / "gone" / "x.db"
    module = "nadird.master.state.litestream_tables"
    done = subprocess.run(
        [sys.executable, "-m", module, str(missing_dir)], capture_output=True, text=True
    )
    assert done.returncode == 1 and str(missing_dir) in done.stderr
