"""Reading the page history (store/history.py) back in chunks, for
`export --changes`.

The versions come by job, URL, then time (and id, for two versions of one
time), the order of the `changes_job_url` index, so pairing a version with
the one before it needs to hold one version only. Each chunk is a fresh
query that starts after the last row of the one before (keyset pagination):
no read transaction stays open between chunks, so the writer and the WAL
checkpoint are never held up by a long export, and no chunk re-reads the
rows before it, as OFFSET would.

With `since`, only versions at or after it are read (the index holds the
time, so SQLite skips older ones without reading their rows), and for each
job and URL the version just before its first one is looked up to be the
"old" side of its first change.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from nadird.store.history import Pairing, Version

# (job, url, fetched_at, id) of the last row read: where the next chunk starts.
ChangeKey = tuple[str, str, float, int]
# The changes of a chunk, the key of its last version, how many it read.
ChangesChunk = tuple[list[dict[str, Any]], ChangeKey | None, int]

# INDEXED BY: with `since` and no start key, the planner would rather take
# the time index and sort everything after `since` for each chunk.
_SELECT = "SELECT job, url, fetched_at, id, data, reextract FROM changes INDEXED BY changes_job_url"
_ORDER = " ORDER BY job, url, fetched_at, id LIMIT ?"
_BEFORE_SINCE = (
    "SELECT fetched_at, data FROM changes WHERE job = ? AND url = ? AND fetched_at < ? "
    "ORDER BY fetched_at DESC, id DESC LIMIT 1"
)


def changes_chunk(
    conn: sqlite3.Connection,
    pairing: Pairing,
    job: str | None,
    after: ChangeKey | None,
    rows: int,
) -> ChangesChunk:
    """The changes of the next `rows` versions after `after` (of `job`, or
    all); with the key of the last version read and how many were read (fewer
    than `rows`: the history ends there). `pairing` carries the last version
    from one chunk to the next."""
    found = conn.execute(*_chunk_query(job, pairing.since, after, rows)).fetchall()
    versions: list[Version] = []
    group = None if after is None else (after[0], after[1])
    for name, url, at, _, data, reextract in found:
        if pairing.since is not None and (name, url) != group:
            group = (name, url)
            versions.extend(_before_since(conn, name, url, pairing.since))
        # No signature: pairing compares the data.
        versions.append(Version(url, name, at, "", json.loads(data), bool(reextract)))
    last = after if not found else (found[-1][0], found[-1][1], found[-1][2], found[-1][3])
    return list(pairing.changes(versions)), last, len(found)


def _chunk_query(
    job: str | None, since: float | None, after: ChangeKey | None, rows: int
) -> tuple[str, tuple[Any, ...]]:
    terms: list[str] = []
    args: list[Any] = []
    if job is not None:
        terms.append("job = ?")
        args.append(job)
    if after is not None:
        # Row values: SQLite turns them into one range on the index.
        if job is None:
            terms.append("(job, url, fetched_at, id) > (?, ?, ?, ?)")
            args.extend(after)
        else:
            terms.append("(url, fetched_at, id) > (?, ?, ?)")
            args.extend(after[1:])
    if since is not None:
        terms.append("fetched_at >= ?")
        args.append(since)
    where = " WHERE " + " AND ".join(terms) if terms else ""
    return _SELECT + where + _ORDER, (*args, rows)


def _before_since(conn: sqlite3.Connection, job: str, url: str, since: float) -> list[Version]:
    row = conn.execute(_BEFORE_SINCE, (job, url, since)).fetchone()
    return [] if row is None else [Version(url, job, row[0], "", json.loads(row[1]))]
