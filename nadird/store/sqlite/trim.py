"""SQLite side of history retention (store/retention.py): one step in one
IMMEDIATE transaction on the store's thread, along the (job, url, time)
index; the writer's next batch waits for one step at most."""

from __future__ import annotations

import sqlite3

from nadird.common.errors import StoreError
from nadird.store.retention import URLS_PER_STEP, Keep, TrimStep, doomed, plan_step

_URLS = "SELECT DISTINCT url FROM changes WHERE job = ? AND url > ? ORDER BY url LIMIT ?"
_TIMES = (
    "SELECT id, fetched_at FROM changes WHERE job = ? AND url = ? ORDER BY fetched_at DESC, id DESC"
)


def trim_step(
    conn: sqlite3.Connection, path: str, keep: Keep, after: str | None, limit: int
) -> TrimStep:
    try:
        conn.execute("BEGIN IMMEDIATE")
        urls = [row[0] for row in conn.execute(_URLS, (keep.job, after or "", URLS_PER_STEP))]
        by_url = [
            (url, doomed(conn.execute(_TIMES, (keep.job, url)).fetchall(), keep)) for url in urls
        ]
        ids, step = plan_step(by_url, after, limit, len(urls) == URLS_PER_STEP)
        conn.executemany("DELETE FROM changes WHERE id = ?", [(i,) for i in ids])
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise StoreError(f"{path}: history trim of job {keep.job!r} failed: {exc}") from exc
    return step
