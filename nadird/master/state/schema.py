"""The tables of frontier.db (described in db.py), and the
migration of an older file to the current schema."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from nadird.common.errors import StateError

SCHEMA_VERSION = 5
# Schema 4: the request of a URL that is more than a plain GET
# (nadird/job/request.py, msgpack of RequestSpec.to_wire(); NULL for a plain GET).
# Schema 5: queue.via, the page whose link admitted the URL (row.VIA_SEED
# for a seed; NULL when not known: rows of older files, revisits, dead letters
# queued again), written into the URL's WARC metadata record (for a NULL, the
# archive names the URL's first via, master/archive/copies.py).
_REQUEST_TABLES = ("queue", "dead_letters", "overflow")  # revisits: revisit_db.py
_QUEUE_COLUMNS = """
    id INTEGER PRIMARY KEY,
    domain_id INTEGER NOT NULL,
    priority INTEGER NOT NULL,
    fp BLOB NOT NULL,
    url TEXT NOT NULL,
    depth INTEGER NOT NULL,
    job TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    not_before REAL NOT NULL DEFAULT 0,
    first_failed_at REAL,
    last_error TEXT,
    fallback_from TEXT,
    request BLOB,
    via TEXT
"""
# The queue's columns in schema 1 (later ones are added with their defaults).
_V1_COLUMNS = (
    "id, domain_id, priority, fp, url, depth, job, attempts, not_before, "
    "first_failed_at, last_error"
)
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS domains (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    next_allowed REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS queue ({_QUEUE_COLUMNS});
CREATE INDEX IF NOT EXISTS queue_take ON queue (domain_id, priority DESC, id);
CREATE TABLE IF NOT EXISTS job_counts (job TEXT PRIMARY KEY, admitted INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS job_domain_counts (
    job TEXT NOT NULL,
    domain TEXT NOT NULL,
    admitted INTEGER NOT NULL,
    PRIMARY KEY (job, domain)
);
CREATE TABLE IF NOT EXISTS admitted (seq INTEGER PRIMARY KEY AUTOINCREMENT, fp BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS dead_letters (
    fp BLOB PRIMARY KEY,
    url TEXT NOT NULL,
    job TEXT NOT NULL,
    domain TEXT NOT NULL,
    depth INTEGER NOT NULL,
    priority INTEGER NOT NULL,
    error TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    first_failed_at REAL NOT NULL,
    last_failed_at REAL NOT NULL,
    requeue INTEGER NOT NULL DEFAULT 0,
    request BLOB
);
CREATE TABLE IF NOT EXISTS overflow (
    id INTEGER PRIMARY KEY,
    url TEXT NOT NULL,
    fp BLOB NOT NULL,
    job TEXT NOT NULL,
    domain TEXT NOT NULL,
    priority INTEGER NOT NULL,
    reason TEXT NOT NULL,
    dropped_at REAL NOT NULL,
    request BLOB
);
"""


def prepare(db: sqlite3.Connection, path: Path) -> None:
    """Create what is missing; bring a schema 1 to 4 file to the current schema."""
    db.executescript(_SCHEMA)
    row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    if row is None:
        db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
        return
    version = int(row[0])
    if not 1 <= version <= SCHEMA_VERSION:
        raise StateError(f"{path}: frontier schema {row[0]}, expected {SCHEMA_VERSION}")
    if version == 1:
        _migrate_from_1(db)
    elif version == 2:
        _migrate_from_2(db)
    if version < 4:
        _migrate_from_3(db)
    if version < SCHEMA_VERSION:
        _migrate_from_4(db)


def _migrate_from_1(db: sqlite3.Connection) -> None:
    """Rebuild the queue without its unique fingerprint index (SQLite
    cannot drop a UNIQUE constraint in place). One transaction: a crash
    midway leaves schema 1 intact and the next start tries again."""
    db.executescript(
        f"""
        BEGIN;
        CREATE TABLE queue_v2 ({_QUEUE_COLUMNS});
        INSERT INTO queue_v2 ({_V1_COLUMNS}) SELECT {_V1_COLUMNS} FROM queue;
        DROP TABLE queue;
        ALTER TABLE queue_v2 RENAME TO queue;
        CREATE INDEX queue_take ON queue (domain_id, priority DESC, id);
        UPDATE meta SET value='3' WHERE key='schema_version';
        COMMIT;
        """
    )


def _migrate_from_2(db: sqlite3.Connection) -> None:
    """Schema 3: queue.fallback_from, the job that handed a URL on (on_failure)."""
    db.executescript(
        """
        BEGIN;
        ALTER TABLE queue ADD COLUMN fallback_from TEXT;
        UPDATE meta SET value='3' WHERE key='schema_version';
        COMMIT;
        """
    )


def _migrate_from_3(db: sqlite3.Connection) -> None:
    """Schema 4: the `request` column where it is missing (a schema 1 queue
    was rebuilt with it), in one transaction; every row so far is a plain GET."""
    added = []
    for table in _REQUEST_TABLES:  # fixed table names, no input
        columns = {col[1] for col in db.execute(f"PRAGMA table_info({table})")}
        if "request" not in columns:
            added.append(f"ALTER TABLE {table} ADD COLUMN request BLOB;")
    db.executescript(
        f"""
        BEGIN;
        {" ".join(added)}
        UPDATE meta SET value='4' WHERE key='schema_version';
        COMMIT;
        """
    )


def _migrate_from_4(db: sqlite3.Connection) -> None:
    """Schema 5: queue.via, where it is missing (a schema 1 queue was rebuilt
    with it); NULL for every row so far (not known)."""
    columns = {col[1] for col in db.execute("PRAGMA table_info(queue)")}
    add = "" if "via" in columns else "ALTER TABLE queue ADD COLUMN via TEXT;"
    db.executescript(
        f"""
        BEGIN;
        {add}
        UPDATE meta SET value='5' WHERE key='schema_version';
        COMMIT;
        """
    )
