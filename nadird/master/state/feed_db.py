"""What feeds jobs' hubs named, kept in frontier.db (master/observe/entry_fields.py).

feed_named     one row per article a feed, sitemap or hub page named and
               that has not come in yet: the source, the stated publication
               when it is timed, and what the entry stated. A row leaves
               when its article's result comes in, or MAX_AGE after it was
               noted (an article never fetched: capped, refused, failed;
               checked at the first naming of a run and every TRIM_EVERY after), so the
               table holds about the articles waiting in the queue.
feed_watched   when the master first read each feed or sitemap: entries
               published before are as old as the site, not timed.

Written through the frontier's redo transaction, so a naming commits with
the admission of the links it names and survives a restart.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from nadird.common.sql_in import in_chunks
from nadird.master.observe.entry_fields import Named
from nadird.master.state.redo import RedoTransaction

MAX_AGE = 7 * 86400.0  # seconds a naming waits for its article
TRIM_EVERY = 1000  # namings written between two trims of the old ones
_SCHEMA = """
CREATE TABLE IF NOT EXISTS feed_named (
    fp BLOB PRIMARY KEY,
    source TEXT NOT NULL,
    timed REAL,
    title TEXT NOT NULL,
    published TEXT NOT NULL,
    updated TEXT NOT NULL,
    noted REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS feed_named_noted ON feed_named (noted);
CREATE TABLE IF NOT EXISTS feed_watched (fp BLOB PRIMARY KEY, since REAL NOT NULL) WITHOUT ROWID;
"""
_COLUMNS = "source, timed, title, published, updated"


def _named(row: Sequence[Any]) -> Named:
    source, timed, title, published, updated = row
    return Named(str(source), None if timed is None else float(timed), title, published, updated)


class FeedNamedTable:
    def __init__(self, db: sqlite3.Connection, tx: RedoTransaction) -> None:
        self._db = db
        self._tx = tx
        db.executescript(_SCHEMA)
        # Namings written since the last trim; the first write of a run trims
        # (a master that names few still does; opening the file writes nothing).
        self._written = TRIM_EVERY

    def get_many(self, fps: Sequence[bytes]) -> dict[bytes, Named]:
        found: dict[bytes, Named] = {}
        for chunk, marks in in_chunks(fps):
            cur = self._db.execute(
                f"SELECT fp, {_COLUMNS} FROM feed_named WHERE fp IN ({marks})", chunk
            )
            found.update((row[0], _named(row[1:])) for row in cur)
        return found

    def put_many(self, rows: Sequence[tuple[bytes, Named]], now: float) -> None:
        if not rows:
            return
        self._tx.write_many(
            f"INSERT OR REPLACE INTO feed_named (fp, {_COLUMNS}, noted) VALUES (?,?,?,?,?,?,?)",
            [(fp, n.source, n.timed, n.title, n.published, n.updated, now) for fp, n in rows],
        )
        if self._written >= TRIM_EVERY:
            self._trim(now)
        self._written += len(rows)

    def _trim(self, now: float) -> None:
        """Forget the namings older than MAX_AGE (through the index on `noted`)."""
        self._written = 0
        before = (now - MAX_AGE,)
        # Read first: a start with nothing to trim writes nothing.
        if self._db.execute("SELECT 1 FROM feed_named WHERE noted < ?", before).fetchone():
            self._tx.write("DELETE FROM feed_named WHERE noted < ?", before)

    def take(self, fp: bytes) -> Named | None:
        row = self._db.execute(f"SELECT {_COLUMNS} FROM feed_named WHERE fp=?", (fp,)).fetchone()
        if row is None:
            return None
        self._tx.write("DELETE FROM feed_named WHERE fp=?", (fp,))
        return _named(row)

    def watched_since(self, fp: bytes, now: float) -> float:
        row = self._db.execute("SELECT since FROM feed_watched WHERE fp=?", (fp,)).fetchone()
        if row is not None:
            return float(row[0])
        self._tx.write("INSERT INTO feed_watched VALUES (?, ?)", (fp, now))
        return now

    def waiting(self) -> int:
        """Namings whose article has not come in."""
        return int(self._db.execute("SELECT count(*) FROM feed_named").fetchone()[0])
