"""Which files of the state directory are replicated, and Litestream's config for them.

Litestream replicates SQLite databases only, one replica path per database.
Every SQLite file of the state directory is replicated (frontier.db,
robots.db, and the store or the Mongo spool when they live there), plus a
small manifest database naming them, so that `nadird restore` knows what to
fetch back from any replica type (S3 and SFTP have no listing Litestream
exposes). The other files are rebuilt or made again: see NOT_REPLICATED.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

import yaml

from nadird.config.replica import replica_of
from nadird.master.state.files import FRONTIER_FILE, ROBOTS_FILE, SEEN_FILE

MANIFEST_FILE = "replica.db"  # the names of the replicated databases
LITESTREAM_CONFIG = "litestream.yml"  # generated at each start

# The state directory's other files, and what happens to them after a restore.
NOT_REPLICATED = {
    SEEN_FILE: "rebuilt by the master at its first start, from the store and frontier.db",
    "api.token": "a new one is generated (api.token_file or api.token_env keep theirs)",
    "api.json": "written again when the API starts",
    "sessions.json": "login sessions: the workers log in again (cookies are not copied)",
    LITESTREAM_CONFIG: "written again at each start",
}


def databases(state_dir: Path) -> list[str]:
    """The SQLite files of the state directory to replicate, the manifest first.

    Chosen by name (*.db), never by reading them: this runs in the master,
    which has them open, and closing any descriptor of a file drops every
    POSIX lock the process holds on it, SQLite's included. Litestream's SQLite
    then took frontier.db-shm for unused and truncated it under the master
    (which died of SIGBUS).
    """
    found = {p.name for p in state_dir.glob("*.db") if p.is_file()}
    found.update((FRONTIER_FILE, ROBOTS_FILE))  # opened by the master before this runs
    found.discard(MANIFEST_FILE)
    return [MANIFEST_FILE, *sorted(found)]


def write_manifest(state_dir: Path, names: Iterable[str]) -> None:
    """Record the replicated databases' names, in a database replicated with them."""
    db = sqlite3.connect(state_dir / MANIFEST_FILE, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")  # Litestream replicates WAL databases only
        db.execute("CREATE TABLE IF NOT EXISTS files (name TEXT PRIMARY KEY)")
        db.execute("BEGIN")
        db.executemany("INSERT OR IGNORE INTO files VALUES (?)", [(n,) for n in names])
        db.execute("COMMIT")
    finally:
        db.close()


def read_manifest(path: Path) -> list[str]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [name for (name,) in db.execute("SELECT name FROM files ORDER BY name")]
    finally:
        db.close()


def replica_entry(url: str, name: str, sftp_key: str | None) -> dict[str, str]:
    """Litestream's replica settings for database `name`: its URL, and the
    key an sftp:// replica logs in with (Litestream's config file takes one,
    its URLs do not)."""
    entry = {"url": replica_of(url, name)}
    if sftp_key is not None:
        entry["key-path"] = sftp_key
    return entry


def litestream_config(
    state_dir: Path, url: str, names: Iterable[str], interval: float, sftp_key: str | None = None
) -> str:
    """litestream.yml for the state directory's databases.

    Debug logging on purpose: Litestream 0.5 tells the replica's position only
    in its `replica sync` lines (its metrics show the local database's), and
    the lag is measured from them (observe/replica_lag.py).
    """
    every = f"{max(1, round(interval * 1000))}ms"
    config = {
        "logging": {"level": "debug", "type": "json"},
        "dbs": [
            {
                "path": str((state_dir / name).resolve()),
                "monitor-interval": every,
                "replica": {**replica_entry(url, name, sftp_key), "sync-interval": every},
            }
            for name in names
        ],
    }
    return yaml.safe_dump(config, sort_keys=False)
