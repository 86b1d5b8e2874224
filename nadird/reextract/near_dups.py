"""Near-duplicates among a job's stored articles, decided by `nadird reextract`.

The master decides `near_duplicate_of` for the pages it receives, against its
index in frontier.db (master/results/near_dups.py). `nadird reextract` runs
without a master, on what the store holds, so there the store's own records
are the truth: once the pass has fingerprinted the job's pages, they are
read again and walked in the order they were fetched, through an index of
the same kind (master/state/neardup_db.py) built for this run in a temporary
directory. A page whose text is within NEAR_BITS of an earlier-fetched one
gets that page's URL (with `near_duplicates: drop`, its item is cleared as
the master would); a page stored as a copy that no longer is one gets None.
Only the pages whose answer changed are written (with `drop`, also the
copies whose item the pass has just extracted again, to clear it again).

The fetch order, the index and the answers live in SQLite files, not in
memory: a job's millions of pages cost a few hundred bytes of disk each,
and the pass keeps one chunk of pages in memory at a time.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import tempfile
from collections import Counter
from pathlib import Path

from nadird.common.simhash import NEAR_BITS
from nadird.job.spec import Job
from nadird.master.state.neardup_db import NearDupTable
from nadird.master.state.redo import RedoTransaction
from nadird.store.stored import PageStore, PageUpdate, StoredPage

MARKED, DROPPED, CLEARED = "marked", "dropped", "cleared"
_COMMIT_EVERY = 1000  # lookups per commit of the index (its redo list stays short)
Answers = list[tuple[str, str | None]]  # (page key, the URL of its text's first page)


async def mark_near_duplicates(store: PageStore, job: Job, chunk: int) -> Counter[str]:
    """Decide `near_duplicate_of` for every fingerprinted page of the job;
    the pages written, per MARKED, DROPPED and CLEARED."""
    written: Counter[str] = Counter()
    if not job.article or job.near_duplicates == "keep":
        return written  # no fingerprints taken (worker/parse/item.py), nothing to decide
    with tempfile.TemporaryDirectory(prefix="nadird-near-dups-") as tmp:
        db = sqlite3.connect(Path(tmp) / "index.db", isolation_level=None)
        try:
            db.execute("CREATE TABLE fetched (at REAL, key TEXT, url TEXT, simhash INTEGER)")
            db.execute("CREATE TABLE answer (key TEXT PRIMARY KEY, first TEXT)")
            await _note_fetch_order(store, job.name, chunk, db)
            _decide(db, job.name)
            await _write_answers(store, job, chunk, db, written)
        finally:
            db.close()
    return written


async def _note_fetch_order(store: PageStore, job: str, chunk: int, db: sqlite3.Connection) -> None:
    after: str | None = None
    while True:
        pages = await store.read_pages(job, after, None, chunk)
        rows = [
            (p.record.fetched_at, p.key, p.record.final_url or p.record.url, p.record.simhash)
            for p in pages
            if p.record is not None and p.record.simhash is not None
        ]
        db.execute("BEGIN")
        db.executemany("INSERT INTO fetched VALUES (?, ?, ?, ?)", rows)
        db.execute("COMMIT")
        if len(pages) < chunk:
            return
        after = pages[-1].key


def _decide(db: sqlite3.Connection, job: str) -> None:
    """Each fingerprinted page's first (None: it is the first of its text),
    through the index in fetch order."""
    index_db = sqlite3.connect(_index_path(db), isolation_level=None)
    try:
        tx = RedoTransaction(index_db, "near_dups", None)
        table = NearDupTable(index_db, tx)
        order = db.execute("SELECT key, url, simhash FROM fetched ORDER BY at, rowid")
        answers: Answers = []
        for key, url, fingerprint in order:
            first = table.first_of(job, int(fingerprint), str(url), NEAR_BITS)
            answers.append((key, None if first == url else first))
            if len(answers) == _COMMIT_EVERY:
                _keep(db, tx, answers)
        _keep(db, tx, answers)
    finally:
        index_db.close()


def _keep(db: sqlite3.Connection, tx: RedoTransaction, answers: Answers) -> None:
    """Commit the index and store the answers so far (memory stays one batch)."""
    tx.commit(retry_now=True)
    db.executemany("INSERT OR REPLACE INTO answer VALUES (?, ?)", answers)
    answers.clear()


def _index_path(db: sqlite3.Connection) -> str:
    """The index's file, beside the fetch order's."""
    (main,) = [row[2] for row in db.execute("PRAGMA database_list") if row[1] == "main"]
    return str(Path(main).with_name("near_dups.db"))


async def _write_answers(
    store: PageStore, job: Job, chunk: int, db: sqlite3.Connection, written: Counter[str]
) -> None:
    after: str | None = None
    while True:
        pages = await store.read_pages(job.name, after, None, chunk)
        updates = [u for u in (_update(p, job, db) for p in pages) if u is not None]
        if updates:
            outcome = await store.update_page_data(updates)
            landed = set(outcome.landed)
            for update in updates:
                if update.page.key in landed:
                    written[_action(update, job)] += 1
        if len(pages) < chunk:
            return
        after = pages[-1].key


def _update(page: StoredPage, job: Job, db: sqlite3.Connection) -> PageUpdate | None:
    record = page.record
    if record is None or page.reason is not None:
        return None  # skipped by the pass too (a MongoDB duplicate, no item...)
    # A page without a fingerprint (its text too short now) is nobody's copy.
    row = db.execute("SELECT first FROM answer WHERE key = ?", (page.key,)).fetchone()
    first = None if row is None else row[0]
    # With `drop`, the pass has just extracted a dropped copy's item again.
    data = {} if first is not None and job.near_duplicates == "drop" else record.data
    if first == record.near_duplicate_of and data == record.data:
        return None
    return PageUpdate(page, dataclasses.replace(record, near_duplicate_of=first, data=data))


def _action(update: PageUpdate, job: Job) -> str:
    """What the update did (a dropped copy dropped again counts again)."""
    if update.record.near_duplicate_of is None:
        return CLEARED
    return DROPPED if job.near_duplicates == "drop" else MARKED
