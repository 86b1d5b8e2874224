"""Which state-dir files are replicated, the manifest, and Litestream's config."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import yaml

from nadird.master.state.replica_files import (
    MANIFEST_FILE,
    databases,
    litestream_config,
    read_manifest,
    write_manifest,
)


def test_the_state_dirs_databases_are_chosen_by_name_with_the_manifest_first(
    tmp_path: Path,
) -> None:
    for name in ("pages.db", "pages.db-wal", "pages.db-shm", "seen.bloom", "api.token"):
        (tmp_path / name).write_bytes(b"x")
    (tmp_path / ".frontier.db-litestream").mkdir()
    assert databases(tmp_path) == [MANIFEST_FILE, "frontier.db", "pages.db", "robots.db"]


def test_the_manifest_is_a_wal_database_naming_the_others(tmp_path: Path) -> None:
    write_manifest(tmp_path, ["frontier.db", "robots.db"])
    write_manifest(tmp_path, ["frontier.db", "pages.db"])  # a later start adds
    assert read_manifest(tmp_path / MANIFEST_FILE) == ["frontier.db", "pages.db", "robots.db"]
    db = sqlite3.connect(tmp_path / MANIFEST_FILE)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


def test_litestream_config_gives_each_database_its_own_replica_path(tmp_path: Path) -> None:
    text = litestream_config(tmp_path, "s3://bucket/nadird/", ["frontier.db"], 0.25)
    config = yaml.safe_load(text)
    assert config["logging"]["level"] == "debug"  # the `replica sync` lines
    [db] = config["dbs"]
    assert db["path"] == str((tmp_path / "frontier.db").resolve())
    assert db["replica"] == {"url": "s3://bucket/nadird/frontier.db", "sync-interval": "250ms"}
    assert db["monitor-interval"] == "250ms"


def test_a_missing_snapshot_is_rebuilt_only_once_the_log_was_trimmed(tmp_path: Path) -> None:
    from nadird.config import Config, MasterConfig
    from nadird.master.frontier.seen_rebuild import snapshot_lost
    from nadird.master.state.frontier_db import FrontierDB

    config = Config(master=MasterConfig(state_dir=str(tmp_path)))
    assert not snapshot_lost(config)  # a new state dir
    db = FrontierDB(tmp_path / "frontier.db")
    db._db.execute("INSERT INTO admitted (fp) VALUES (x'01'), (x'02')")
    db.close()
    assert not snapshot_lost(config)  # no snapshot yet: the whole log replays
    db = FrontierDB(tmp_path / "frontier.db")
    db.trim_admitted(1)
    db.close()
    assert snapshot_lost(config)  # restored without seen.bloom: rebuild
    (tmp_path / "seen.bloom").write_bytes(b"")
    assert not snapshot_lost(config)
