"""The last full copy archived of each URI: what a revisit record refers to.

Kept in the state directory's `archive.db` (SQLite), so that a crawl resumed
or revisiting days later still writes revisits, not second copies. One row per
URI, keyed by a 16-byte hash of it (a row stays near 80 bytes whatever the
URI's length): its payload digest and the WARC-Date of the response that
holds it.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Mapping
from pathlib import Path

from nadird.master.archive.records import Stored

ARCHIVE_FILE = "archive.db"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS copies (
    uri_hash BLOB PRIMARY KEY,
    digest TEXT NOT NULL,
    date TEXT NOT NULL
) WITHOUT ROWID
"""


class Copies:
    def __init__(self, state_dir: Path) -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(state_dir / ARCHIVE_FILE, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)

    def get(self, uri: str) -> Stored | None:
        row = self._db.execute(
            "SELECT digest, date FROM copies WHERE uri_hash = ?", (_key(uri),)
        ).fetchone()
        return None if row is None else Stored(row[0], row[1])

    def put(self, copies: Mapping[str, Stored]) -> None:
        """Called once the records are in the file, in one transaction."""
        if not copies:
            return
        self._db.execute("BEGIN")
        self._db.executemany(
            "INSERT OR REPLACE INTO copies (uri_hash, digest, date) VALUES (?, ?, ?)",
            [(_key(uri), c.digest, c.date) for uri, c in copies.items()],
        )
        self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()


def _key(uri: str) -> bytes:
    return hashlib.blake2b(uri.encode("utf-8", "surrogatepass"), digest_size=16).digest()
