"""The revisit schedule on disk: one row per known URL of a revisiting job.

A table of frontier.db, written through the frontier's redo transaction, so
a schedule change commits with the frontier bookkeeping it belongs to (a
URL's queue row leaves in the transaction that records its fetch here; a due
URL's queue row arrives in the one that marks it queued): a crash neither
loses a revisit nor runs one twice. Times are wall-clock epoch seconds, as
stored times must be. The due scan walks the index on (queued, next_due)
from the oldest row not yet queued up to "now", so its cost follows what is
due, not what is known; and a URL once queued leaves that range, so a
backlog of queued revisits waiting for politeness is not walked again every
tick (an index on next_due alone was: 24-38 ms a tick for 11,000 queued).

Columns: fp (key), url, job, domain, depth; next_due (NULL: only link
discovery after `expire` makes it due) and queued (1 while its queue row
exists); interval, last_fetch, last_change; checks and changes (plain
counts), stats (the estimator's decayed ChangeStats as JSON); the
validators etag and last_modified; signature (worker/parse/signature.py);
watched (JSON: the last values of the fields a `change` alert rule watches,
NULL when none does; added to an older table when it opens);
plan_rule and plan_class, the page's group in its domain's revisit plan
(revisit/plan.py; plan_rule NULL: not adaptive, plan_class NULL: rate not
known yet; added to an older table when it opens), counted per group in
the table revisit_plan_counts, which triggers keep exact in the transaction
of every change (revisit_counts.py): a start reads the counts, not the rows;
hub (a feeds job's hub by what it answered or found, not by its address:
HUB_FEED, HUB_LEARNED, 0 for none) and hub_idle (a learned hub's fetches in
a row that found no new article), both added to an older table when it opens.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from nadird.common.sql_in import in_chunks
from nadird.master.state.etag_db import EtagHostTable
from nadird.master.state.redo import RedoTransaction
from nadird.master.state.revisit_counts import PlanCount, prepare_counts, read_counts
from nadird.master.state.revisit_policy_db import PolicyTable
from nadird.revisit.estimate import ChangeStats

HUB_FEED = 1  # it answered as a feed or sitemap (job/feeds.py)
HUB_LEARNED = 2  # it kept finding new articles (master/revisits/learned_hubs.py)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS revisits (
    fp BLOB PRIMARY KEY,
    url TEXT NOT NULL,
    job TEXT NOT NULL,
    domain TEXT NOT NULL,
    depth INTEGER NOT NULL,
    next_due REAL,
    queued INTEGER NOT NULL DEFAULT 0,
    interval REAL NOT NULL DEFAULT 0,
    last_fetch REAL NOT NULL,
    last_change REAL,
    checks INTEGER NOT NULL DEFAULT 0,
    changes INTEGER NOT NULL DEFAULT 0,
    stats TEXT NOT NULL,
    etag TEXT NOT NULL DEFAULT '',
    last_modified TEXT NOT NULL DEFAULT '',
    signature TEXT,
    watched TEXT,
    request BLOB,
    plan_rule INTEGER,
    plan_class INTEGER,
    hub INTEGER NOT NULL DEFAULT 0,
    hub_idle INTEGER NOT NULL DEFAULT 0
);
DROP INDEX IF EXISTS revisits_due;
CREATE INDEX IF NOT EXISTS revisits_waiting ON revisits (queued, next_due);
"""
_COLUMNS = (
    "fp, url, job, domain, depth, next_due, queued, interval, last_fetch, last_change, "
    "checks, changes, stats, etag, last_modified, signature, watched, request, "
    "plan_rule, plan_class, hub, hub_idle"
)
# An upsert, not INSERT OR REPLACE: a replaced row's delete would fire no
# trigger (recursive_triggers is off), and the old group's count would stay.
_NAMES = [name.strip() for name in _COLUMNS.split(",")]
_UPSERT = (
    f"INSERT INTO revisits ({_COLUMNS}) VALUES ({','.join('?' * len(_NAMES))}) "
    "ON CONFLICT (fp) DO UPDATE SET "
    + ", ".join(f"{name} = excluded.{name}" for name in _NAMES[1:])
)


@dataclass(slots=True)
class Entry:
    fp: bytes
    url: str
    job: str
    domain: str
    depth: int
    next_due: float | None
    queued: bool
    interval: float
    last_fetch: float
    last_change: float | None
    checks: int
    changes: int
    stats: ChangeStats
    etag: str
    last_modified: str
    signature: str | None
    watched: dict[str, Any] | None = None
    request: bytes | None = None  # the queue row's (db.Row.request): asked again alike
    plan_rule: int | None = None
    plan_class: int | None = None
    # A feeds job's hub whatever its address (HUB_FEED, HUB_LEARNED; 0:
    # none), kept here so a restarted master knows it.
    hub: int = 0
    # A learned hub's fetches in a row that found no new article (learned_hubs.py).
    hub_idle: int = 0

    def to_row(self) -> tuple[object, ...]:
        return (
            self.fp,
            self.url,
            self.job,
            self.domain,
            self.depth,
            self.next_due,
            int(self.queued),
            self.interval,
            self.last_fetch,
            self.last_change,
            self.checks,
            self.changes,
            json.dumps(list(self.stats)),
            self.etag,
            self.last_modified,
            self.signature,
            None if self.watched is None else json.dumps(self.watched, ensure_ascii=False),
            self.request,
            self.plan_rule,
            self.plan_class,
            self.hub,
            self.hub_idle,
        )


def _entry(row: Any) -> Entry:  # a row of _COLUMNS
    fp, url, job, domain, depth, due, queued, interval, last, change, checks, changes = row[:12]
    stats, etag, modified, signature, watched, request, rule, klass, hub, idle = row[12:]
    return Entry(
        fp,
        str(url),
        str(job),
        str(domain),
        int(depth),
        None if due is None else float(due),
        bool(queued),
        float(interval),
        float(last),
        None if change is None else float(change),
        int(checks),
        int(changes),
        ChangeStats(*json.loads(str(stats))),
        str(etag),
        str(modified),
        None if signature is None else str(signature),
        None if watched is None else json.loads(str(watched)),
        request,
        None if rule is None else int(rule),
        None if klass is None else int(klass),
        int(hub),
        int(idle),
    )


class RevisitTable:
    def __init__(self, db: sqlite3.Connection, tx: RedoTransaction) -> None:
        self._db = db
        self._tx = tx
        db.executescript(_SCHEMA)
        columns = {row[1] for row in db.execute("PRAGMA table_info(revisits)")}
        if "watched" not in columns:  # a table from before change alerts
            db.execute("ALTER TABLE revisits ADD COLUMN watched TEXT")
        if "request" not in columns:  # a table from before requests (frontier schema 4)
            db.execute("ALTER TABLE revisits ADD COLUMN request BLOB")
        for name in ("plan_rule", "plan_class"):  # from before per-domain plans
            if name not in columns:
                db.execute(f"ALTER TABLE revisits ADD COLUMN {name} INTEGER")
        if "hub" not in columns:  # a table from before hubs told by what they answered
            db.execute("ALTER TABLE revisits ADD COLUMN hub INTEGER NOT NULL DEFAULT 0")
        if "hub_idle" not in columns:  # from before learned hubs' idle checks were kept
            db.execute("ALTER TABLE revisits ADD COLUMN hub_idle INTEGER NOT NULL DEFAULT 0")
        prepare_counts(db)  # once the plan columns exist: its triggers read them
        self.etag_hosts = EtagHostTable(db, tx)  # what revisits learnt of ETags per host
        self.policies = PolicyTable(db, tx)  # the policy each job's rows follow

    def get_many(self, fps: Sequence[bytes]) -> dict[bytes, Entry]:
        found: dict[bytes, Entry] = {}
        for chunk, marks in in_chunks(fps):
            cur = self._db.execute(f"SELECT {_COLUMNS} FROM revisits WHERE fp IN ({marks})", chunk)
            found.update((e.fp, e) for e in map(_entry, cur))
        return found

    def get(self, fp: bytes) -> Entry | None:
        return self.get_many([fp]).get(fp)

    def put_many(self, entries: Iterable[Entry]) -> None:
        rows: list[Sequence[Any]] = [e.to_row() for e in entries]
        if rows:
            self._tx.write_many(_UPSERT, rows)

    def due(self, now: float, limit: int) -> list[Entry]:
        """Up to `limit` rows due at `now` and not queued yet, the most overdue first."""
        cur = self._db.execute(
            f"SELECT {_COLUMNS} FROM revisits WHERE queued = 0 AND next_due <= ? "
            "ORDER BY next_due LIMIT ?",
            (now, limit),
        )
        return [_entry(row) for row in cur]

    def first_due(self) -> float | None:
        """The earliest due time of a row not queued yet (the index's first entry)."""
        row = self._db.execute(
            "SELECT next_due FROM revisits WHERE queued = 0 AND next_due IS NOT NULL "
            "ORDER BY next_due LIMIT 1"
        ).fetchone()
        return None if row is None else float(row[0])

    def queued_watched(self, jobs: Sequence[str]) -> list[Entry]:
        """The rows of `jobs` with watched values whose URL is in the queue
        (a revisit due or under way): those a crash can have left behind the store."""
        marks = ",".join("?" * len(jobs))
        cur = self._db.execute(
            f"SELECT {_COLUMNS} FROM revisits "
            f"WHERE queued = 1 AND watched IS NOT NULL AND job IN ({marks})",
            list(jobs),
        )
        return [_entry(row) for row in cur]

    def set_watched(self, items: Sequence[tuple[bytes, dict[str, Any]]]) -> None:
        self._tx.write_many(
            "UPDATE revisits SET watched = ? WHERE fp = ?",
            [(json.dumps(values, ensure_ascii=False), fp) for fp, values in items],
        )

    def mark_queued(self, fps: Sequence[bytes]) -> None:
        self._tx.write_many("UPDATE revisits SET queued = 1 WHERE fp = ?", [(fp,) for fp in fps])

    def set_due(self, items: Sequence[tuple[bytes, float | None]]) -> None:
        """Make rows due at a time (None: by discovery only) and not queued."""
        self._tx.write_many(
            "UPDATE revisits SET next_due = ?, queued = 0 WHERE fp = ?",
            [(when, fp) for fp, when in items],
        )

    def chunk_end(self, after: int, limit: int) -> tuple[int | None, int]:
        """The largest rowid among the next `limit` rows by rowid after
        `after`, and how many there are (None, 0 at the end). By rowid, not
        fingerprint: the rows' own order on disk, so a walk reads and
        rewrites neighbouring pages (by fingerprint: 3x the time a chunk)."""
        row = self._db.execute(
            "SELECT max(rowid), count(*) FROM "
            "(SELECT rowid FROM revisits WHERE rowid > ? ORDER BY rowid LIMIT ?)",
            (after, limit),
        ).fetchone()
        return row[0], int(row[1])

    def waiting_between(self, job: str, after: int, upto: int) -> list[tuple[int, Entry]]:
        """(rowid, row) of `job`'s rows with rowid in (after, upto], not queued."""
        cur = self._db.execute(
            f"SELECT rowid, {_COLUMNS} FROM revisits "
            "WHERE rowid > ? AND rowid <= ? AND job = ? AND +queued = 0",  # not the due index
            (after, upto, job),
        )
        return [(int(row[0]), _entry(row[1:])) for row in cur]

    def set_plan(self, rows: Sequence[tuple[int, Entry]]) -> None:
        """Write the rows' due times and plan groups, by rowid (an UPDATE: the
        count triggers move their groups' pages)."""
        self._tx.write_many(
            "UPDATE revisits SET next_due = ?, plan_rule = ?, plan_class = ? WHERE rowid = ?",
            [(e.next_due, e.plan_rule, e.plan_class, rowid) for rowid, e in rows],
        )

    def count_due(self, before: float) -> int:
        """Rows due before `before`, queued or not (two index ranges: O(due))."""
        row = self._db.execute(
            "SELECT count(*) FROM revisits WHERE queued IN (0, 1) AND next_due <= ?", (before,)
        ).fetchone()
        return int(row[0])

    def plan_counts(self) -> list[PlanCount]:
        """(domain, job, plan_rule, plan_class, pages) of the adaptive rows, from
        the durable counts (one row per group); then the master keeps them itself."""
        return read_counts(self._db)

    def known(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM revisits").fetchone()[0])
