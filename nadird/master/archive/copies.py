"""The last full copy archived of each URI: what a revisit record refers to.

Kept in the state directory's `archive.db` (SQLite), so that a crawl resumed
or revisiting days later still writes revisits, not second copies. One row per
URI, keyed by a 16-byte hash of it (a row stays near 80 bytes whatever the
URI's length): its payload digest and the WARC-Date of the response that
holds it. And, for the console's URL page, where each page's own record
went (`captures`): one row per page archived, about 60 bytes, keyed by the
page's fingerprint and time; the file names are kept once each (`files`).
The captures follow the files: those of a file no longer in the archive's
directory (deleted or moved away by its operator) are dropped once the
master sees it gone (service.py, Trim), so the table is as large as the
archive kept.

And the first `via` of each page (`vias`, by fingerprint, kept from its
first fetch on): the frontier's queue row says it only until the page is
stored, so a page fetched again (a revisit, a dead letter queued again) has
none there, and its later captures name this one. Not dropped with the
files: it is the page's, not a capture's (about 120 bytes a page).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from nadird.common.sql_in import in_chunks
from nadird.master.archive.records import Stored

ARCHIVE_FILE = "archive.db"
_NO_VIAS: Mapping[bytes, str] = MappingProxyType({})
_SCHEMA = """
CREATE TABLE IF NOT EXISTS copies (
    uri_hash BLOB PRIMARY KEY,
    digest TEXT NOT NULL,
    date TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS files (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS captures (
    fp BLOB NOT NULL,
    at REAL NOT NULL,
    file INTEGER NOT NULL REFERENCES files (id),
    offset INTEGER NOT NULL,
    revisit INTEGER NOT NULL,
    rendered INTEGER NOT NULL,
    PRIMARY KEY (fp, at, file, offset)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vias (fp BLOB PRIMARY KEY, via TEXT NOT NULL) WITHOUT ROWID;
"""


@dataclass(frozen=True, slots=True)
class Capture:
    """Where a page's own record (its response, or a revisit) was archived."""

    fp: bytes  # the page's fingerprint (the URL the store keeps)
    at: float  # when the page was fetched (its result's fetched_at)
    file: str  # the WARC file's name, in warc.dir
    offset: int  # where the record's gzip member starts in the file
    revisit: bool  # a revisit record (not modified, or the same payload as before)
    rendered: bool  # a conversion record holds the DOM a browser rendered


class Copies:
    def __init__(self, state_dir: Path) -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(state_dir / ARCHIVE_FILE, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._files: dict[str, int] = {}

    def get(self, uri: str) -> Stored | None:
        row = self._db.execute(
            "SELECT digest, date FROM copies WHERE uri_hash = ?", (_key(uri),)
        ).fetchone()
        return None if row is None else Stored(row[0], row[1])

    def put(
        self,
        copies: Mapping[str, Stored],
        captures: Iterable[Capture] = (),
        vias: Mapping[bytes, str] = _NO_VIAS,
    ) -> None:
        """Called once the records are in the file, in one transaction
        (`vias`: pages' first, a page's later ones are passed over)."""
        captures = list(captures)
        if not copies and not captures and not vias:
            return
        self._db.execute("BEGIN")
        self._db.executemany("INSERT OR IGNORE INTO vias VALUES (?, ?)", vias.items())
        self._db.executemany(
            "INSERT OR REPLACE INTO copies (uri_hash, digest, date) VALUES (?, ?, ?)",
            [(_key(uri), c.digest, c.date) for uri, c in copies.items()],
        )
        self._db.executemany(
            "INSERT OR REPLACE INTO captures VALUES (?, ?, ?, ?, ?, ?)",
            [
                (c.fp, c.at, self._file_id(c.file), c.offset, c.revisit, c.rendered)
                for c in captures
            ],
        )
        self._db.execute("COMMIT")

    def first_vias(self, fps: Sequence[bytes]) -> dict[bytes, str]:
        """The first `via` kept of each of these pages that has one."""
        found: dict[bytes, str] = {}
        for chunk, marks in in_chunks(fps):
            cur = self._db.execute(f"SELECT fp, via FROM vias WHERE fp IN ({marks})", chunk)
            found.update(cur)
        return found

    def captures(self, fp: bytes, limit: int) -> list[Capture]:
        """The page's latest captures, newest first."""
        rows = self._db.execute(
            "SELECT c.at, f.name, c.offset, c.revisit, c.rendered FROM captures c"
            " JOIN files f ON f.id = c.file WHERE c.fp = ? ORDER BY c.at DESC LIMIT ?",
            (fp, limit),
        ).fetchall()
        return [
            Capture(fp, at, name, offset, bool(rv), bool(rd)) for at, name, offset, rv, rd in rows
        ]

    def gone(self, present: Callable[[str], bool]) -> dict[int, str]:
        """The files (id -> name) that `present` says are gone."""
        files = self._db.execute("SELECT id, name FROM files").fetchall()
        return {i: name for i, name in files if not present(name)}

    def drop_part(self, files: Iterable[int], part: int) -> int:
        """Drop the captures of `files` among the pages whose fingerprint
        begins with the byte `part` (0-255); the rows dropped. The rows are
        not indexed by file (that would cost every insert), so dropping scans:
        a 256th of the table at a time, through the key, keeps each step short."""
        ids = list(files)
        marks = ",".join("?" * len(ids))
        bounds = "fp >= ?" + (" AND fp < ?" if part < 255 else "")
        keys = [bytes([part])] + ([bytes([part + 1])] if part < 255 else [])
        cur = self._db.execute(
            f"DELETE FROM captures WHERE {bounds} AND file IN ({marks})", [*keys, *ids]
        )
        return cur.rowcount

    def forget_files(self, files: Mapping[int, str]) -> None:
        """Once every part of their captures is dropped."""
        marks = ",".join("?" * len(files))
        self._db.execute(f"DELETE FROM files WHERE id IN ({marks})", list(files))
        for name in files.values():
            self._files.pop(name, None)

    def _file_id(self, name: str) -> int:
        known = self._files.get(name)
        if known is None:
            self._db.execute("INSERT OR IGNORE INTO files (name) VALUES (?)", (name,))
            row = self._db.execute("SELECT id FROM files WHERE name = ?", (name,)).fetchone()
            known = self._files[name] = int(row[0])
        return known

    def close(self) -> None:
        self._db.close()


def _key(uri: str) -> bytes:
    return hashlib.blake2b(uri.encode("utf-8", "surrogatepass"), digest_size=16).digest()
