"""One page's stored record and its versions, for the console's URL page.

Runs on the store's thread (SqliteStore). A page of versions is read from
the `changes_job_url` index, newest first, with one version more than
shown: the one before the oldest shown, which its changes are compared
with. Counting a URL's versions walks its index entries only (10,000
versions: about a millisecond).
"""

from __future__ import annotations

import json
import sqlite3

from nadird.common.errors import StoreError
from nadird.store.base import PageRecord
from nadird.store.history import Version
from nadird.store.sqlite.schema import NAMES, from_row

_PAGE = f"SELECT {', '.join(NAMES)} FROM pages WHERE fp = ?"
_COUNT = "SELECT count(*) FROM changes WHERE job = ? AND url = ?"
_VERSIONS = (
    "SELECT fetched_at, signature, data, reextract FROM changes WHERE job = ? AND url = ? "
    "ORDER BY fetched_at DESC, id DESC LIMIT ? OFFSET ?"
)


def page_of(conn: sqlite3.Connection, path: str, fp: bytes) -> PageRecord | None:
    """The stored record of a page, with its body; None if it is not stored."""
    try:
        row = conn.execute(_PAGE, (fp,)).fetchone()
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot read a page: {exc}") from exc
    return None if row is None else from_row(row)


def versions_page(
    conn: sqlite3.Connection, path: str, job: str, url: str, offset: int, limit: int
) -> tuple[int, list[Version]]:
    """How many versions the page has, and `limit` of them from `offset`,
    newest first, plus the one before them when there is one."""
    try:
        total = int(conn.execute(_COUNT, (job, url)).fetchone()[0])
        rows = conn.execute(_VERSIONS, (job, url, limit + 1, offset)).fetchall()
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot read a page's versions: {exc}") from exc
    versions = [
        Version(url, job, at, signature, json.loads(data), bool(reextract))
        for at, signature, data, reextract in rows
    ]
    return total, versions
