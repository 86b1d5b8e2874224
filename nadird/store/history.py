"""Page history: a version per change of a revisited page, and the diffs.

A version is (url, job, time, the extracted data, signature). The store
writer appends one with the page's record, in the same transaction, when the
page's signature differs from its latest version (the first fetch is the
first version). Comparing with what is stored, not with what the master
remembers, makes the append idempotent: a page fetched again after a crash
(its record stored, the master's bookkeeping lost) has the signature of its
latest version and adds none. `nadird reextract` appends versions the same
way, marked `reextract` (new rules over a stored body, not a change of the
site); a job's `history:` bounds how many are kept (store/retention.py).

`nadird export --changes` pairs each version with the one before it (of
the same job and URL) and prints the fields whose values differ, old and
new. The stores read the versions in chunks by job, URL and time
(sqlite/changes.py, mongo/history.py) and `Pairing` holds one version
between chunks, so the export needs no more memory for a longer history.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from nadird.store.base import PageRecord

SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS changes (
    id INTEGER PRIMARY KEY,
    url TEXT NOT NULL,
    job TEXT NOT NULL,
    fetched_at REAL NOT NULL,
    signature TEXT NOT NULL,
    data TEXT NOT NULL,
    reextract INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS changes_job_url ON changes (job, url, fetched_at);
CREATE INDEX IF NOT EXISTS changes_time ON changes (fetched_at);
DROP INDEX IF EXISTS changes_url;
"""
# A store made before versions were marked gets the column at open
# (history_columns); its versions read as fetched ones, which they were.
REEXTRACT_COLUMN = "ALTER TABLE changes ADD COLUMN reextract INTEGER NOT NULL DEFAULT 0"
# Run at every open, so an older store gets the (job, url, time) index that
# `export --changes` walks (built once, at the first open after an upgrade)
# and loses the (url, time) one it replaces: job and URL are equalities in
# every lookup. Indexes only, so no schema version: an older nadird reads and
# writes the table as before (and would recreate its index).
_LATEST = (
    "SELECT signature FROM changes WHERE url = ? AND job = ? "
    "ORDER BY fetched_at DESC, id DESC LIMIT 1"
)


@dataclass(frozen=True, slots=True)
class Version:
    url: str
    job: str
    fetched_at: float
    signature: str
    data: dict[str, Any]
    # Made by `nadird reextract` from a stored body, not by a fetch: the
    # rules changed, not the page (its time is that body's fetch time).
    reextract: bool = False


def versions_of(records: Iterable[PageRecord], reextract: bool = False) -> Iterator[Version]:
    """The records that may be versions: those with a signature (revisiting jobs)."""
    for r in records:
        if r.signature is not None:
            yield Version(r.url, r.job, r.fetched_at, r.signature, r.data, reextract)


def history_columns(conn: sqlite3.Connection) -> None:
    """Add the columns a store made by an older release lacks (at open)."""
    names = {row[1] for row in conn.execute("PRAGMA table_info(changes)")}
    if "reextract" not in names:
        conn.execute(REEXTRACT_COLUMN)


def append_sqlite(
    conn: sqlite3.Connection, records: Iterable[PageRecord], reextract: bool = False
) -> int:
    """Inside the caller's transaction: a version per changed page; how many.
    `reextract`: the versions come of `nadird reextract`, not of fetches."""
    added = 0
    for v in versions_of(records, reextract):
        latest = conn.execute(_LATEST, (v.url, v.job)).fetchone()
        if latest is not None and latest[0] == v.signature:
            continue
        data = json.dumps(v.data, ensure_ascii=False)
        conn.execute(
            "INSERT INTO changes (url, job, fetched_at, signature, data, reextract) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (v.url, v.job, v.fetched_at, v.signature, data, int(v.reextract)),
        )
        added += 1
    return added


_RECENT = (
    "SELECT id, url, job, fetched_at, data, reextract FROM changes "
    "ORDER BY fetched_at DESC, id DESC"
)
_BEFORE = (
    "SELECT fetched_at, data FROM changes WHERE url = ? AND job = ? "
    "AND (fetched_at < ? OR (fetched_at = ? AND id < ?)) ORDER BY fetched_at DESC, id DESC LIMIT 1"
)
RECENT_SCAN = 1000  # versions looked at, at most, for one list of recent changes


def recent_sqlite(conn: sqlite3.Connection, limit: int) -> list[dict[str, Any]]:
    """The latest `limit` changes, newest first, as `diffs` writes them.

    Cheap at any size of history: the newest versions come by the time
    index, each one's previous version by the (url, time) index; a page's
    first version is no change and is skipped, and so is a re-extraction
    (the rules changed, not the site); at most RECENT_SCAN looked at.
    """
    found: list[dict[str, Any]] = []
    rows = conn.execute(_RECENT + " LIMIT ?", (RECENT_SCAN,)).fetchall()
    for row_id, url, job, at, data, reextract in rows:
        if reextract:
            continue
        before = conn.execute(_BEFORE, (url, job, at, at, row_id)).fetchone()
        if before is None:
            continue
        found.append(
            {
                "url": url,
                "job": job,
                "time": at,
                "previous_time": before[0],
                "changes": field_changes(json.loads(before[1]), json.loads(data)),
            }
        )
        if len(found) >= limit:
            break
    return found


def field_changes(old: dict[str, Any], new: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{field: {"old": ..., "new": ...}} for each field whose value differs."""
    names = list(old) + [name for name in new if name not in old]
    return {
        name: {"old": old.get(name), "new": new.get(name)}
        for name in names
        if old.get(name) != new.get(name)
    }


def diffs(versions: Iterable[Version], since: float | None = None) -> Iterator[dict[str, Any]]:
    """One change per version after the first of its job and URL, from
    versions sorted by job, URL, then time; `since` keeps the changes at or
    after it."""
    return Pairing(since).changes(versions)


class Pairing:
    """Pairs each version with the one before it of the same job and URL.

    Versions come in chunks (of the order `diffs` needs); between chunks
    only the last version is held, so memory stays that of one version
    however long the history.
    """

    def __init__(self, since: float | None = None) -> None:
        self.since = since
        self._previous: Version | None = None

    def changes(self, versions: Iterable[Version]) -> Iterator[dict[str, Any]]:
        for v in versions:
            before = self._previous
            self._previous = v
            if before is None or (before.job, before.url) != (v.job, v.url):
                continue
            if self.since is not None and v.fetched_at < self.since:
                continue
            yield change_line(before, v)


def change_line(before: Version, v: Version) -> dict[str, Any]:
    """One change as exported. A re-extraction's carries `"reextract": true`
    (its time is its body's fetch time, often the previous version's): the
    rules changed, not the page, and the next site change is compared with
    it, so that it shows what the site changed in the rules of today."""
    line = {
        "url": v.url,
        "job": v.job,
        "time": v.fetched_at,
        "previous_time": before.fetched_at,
        "changes": field_changes(before.data, v.data),
    }
    if v.reextract:
        line["reextract"] = True
    return line
