"""The frontier's on-disk half: queued URLs, the admission log, dead letters.

SQLite in WAL mode, used from the master's event-loop thread: every statement
here touches a handful of rows through an index, so it costs microseconds, and
a commit in WAL mode with synchronous=NORMAL does not fsync (it survives a
crash of the process, not a power cut). Everything rides in one open
transaction that the master commits in groups (see service/group_commit.py): a
commit per results message was the master's largest cost. Crash safety does
not need more: a page's links are written before its URL can be deleted (the
deletion waits for the store), in the same transaction, so no commit can
hold the deletion without the links; and the seen-set snapshot is taken only
right after a commit, so it never marks a URL seen that the frontier lacks.

Tables:
  domains       id, name, next_allowed (wall clock; politeness across restarts)
  queue         one row per URL waiting or leased; leaves only once stored.
                Rows are found by rowid (a lease keeps it), never by
                fingerprint: a unique index on random 16-byte fingerprints
                cost more than the rest of an insert (schema 1 had one).
  admitted      seq, fp: every admission since the last seen-set snapshot
  dead_letters  URLs whose retries ran out, with the last error (dead_db.py)
  overflow      URLs dropped by the queue caps, counted and kept for the record
and, sharing the file and the transaction: the revisit schedule
(revisit_db.py), the near-duplicate index (neardup_db.py) and what feeds
named of articles not fetched yet (feed_db.py).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from nadird.common.errors import StateError
from nadird.common.sql_in import in_chunks
from nadird.master.observe.health import StateHealth
from nadird.master.row import Row
from nadird.master.state.dead_db import DeadLetterRows, DeadURL
from nadird.master.state.feed_db import FeedNamedTable
from nadird.master.state.neardup_db import NearDupTable
from nadird.master.state.redo import RedoTransaction
from nadird.master.state.revisit_db import RevisitTable
from nadird.master.state.schema import prepare

_INSERT_ROW = (
    "INSERT INTO queue (domain_id, priority, fp, url, depth, job, request, via) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


@dataclass(frozen=True, slots=True)
class DomainCount:
    id: int
    name: str
    rows: int
    next_allowed: float
    earliest_retry: float


def _row_values(domain_id: int, r: Row) -> tuple[object, ...]:
    return (domain_id, r.priority, r.fp, r.url, r.depth, r.job, r.request, r.via)


class FrontierDB(DeadLetterRows):
    def __init__(self, path: str | Path, health: StateHealth | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            # 16 MiB of page cache instead of SQLite's 2 MiB: admissions touch
            # three indexes at random places (fingerprint, domain queue), and
            # with a large queue most of those pages were read again per batch.
            self._db.execute("PRAGMA cache_size=-16384")
            prepare(self._db, self.path)
        except sqlite3.DatabaseError as exc:
            raise StateError(f"{self.path}: unreadable frontier database ({exc})") from None
        # Every write goes through it: a failed commit keeps the writes (redo.py).
        self._tx = RedoTransaction(self._db, self.path.name, health)
        # The revisit schedule shares the file and the transaction (revisit_db.py).
        self.revisits = RevisitTable(self._db, self._tx)
        # So does the near-duplicate index of article texts (neardup_db.py).
        self.near_dups = NearDupTable(self._db, self._tx)
        # And what feeds jobs' hubs named of articles not fetched yet (feed_db.py).
        self.feed_named = FeedNamedTable(self._db, self._tx)

    # ------------------------------------------------------ transactions
    def commit(self, retry_now: bool = False) -> bool:
        """True once everything written so far is durable; False while the
        file cannot be written (the writes are kept and tried again)."""
        return self._tx.commit(retry_now)

    def close(self) -> bool:
        """Commit and close; False if the last writes could not be committed."""
        committed = self._tx.commit(retry_now=True)
        self._db.close()
        return committed

    def meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._tx.write("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # ------------------------------------------------------------ domains
    def domain_id(self, name: str) -> int:
        row = self._db.execute("SELECT id FROM domains WHERE name=?", (name,)).fetchone()
        if row is not None:
            return int(row[0])
        cur = self._tx.write("INSERT INTO domains (name) VALUES (?)", (name,))
        return int(cur.lastrowid or 0)

    def has_domain(self, name: str) -> bool:
        """Whether a URL of this domain was ever queued (its row outlives the URLs)."""
        return (
            self._db.execute("SELECT 1 FROM domains WHERE name=?", (name,)).fetchone() is not None
        )

    def set_next_allowed(self, domain_id: int, wall: float) -> None:
        self._tx.write("UPDATE domains SET next_allowed=? WHERE id=?", (wall, domain_id))

    def domains_known(self) -> int:
        """Domains ever queued, done ones included."""
        return int(self._db.execute("SELECT count(*) FROM domains").fetchone()[0])

    def domain_names(self) -> Iterator[tuple[int, str]]:
        """(id, name) of every domain ever queued, done ones included."""
        yield from self._db.execute("SELECT id, name FROM domains")

    def domain_counts(self) -> Iterator[DomainCount]:
        """Every domain with its queued rows, for rebuilding memory at start."""
        cur = self._db.execute(
            "SELECT d.id, d.name, d.next_allowed, count(q.id), coalesce(min(q.not_before), 0) "
            "FROM domains d JOIN queue q ON q.domain_id = d.id GROUP BY d.id"
        )
        for did, name, next_allowed, rows, earliest in cur:
            yield DomainCount(did, name, rows, next_allowed, earliest)

    # -------------------------------------------------------------- queue
    def admit(self, rows: Iterable[tuple[int, Row]]) -> int:
        """Insert rows and log their admission (uncommitted: the caller
        commits). Returns the last sequence."""
        # No duplicate check: the seen set admits a fingerprint once, and it
        # holds every queued one (replayed from `admitted` after a crash).
        rows = list(rows)
        self._tx.write_many(_INSERT_ROW, [_row_values(did, r) for did, r in rows])
        self._tx.write_many("INSERT INTO admitted (fp) VALUES (?)", [(r.fp,) for _, r in rows])
        per_job: dict[str, int] = {}
        for _, r in rows:
            per_job[r.job] = per_job.get(r.job, 0) + 1
        self._tx.write_many(
            "INSERT INTO job_counts VALUES (?, ?) "
            "ON CONFLICT(job) DO UPDATE SET admitted = admitted + excluded.admitted",
            list(per_job.items()),
        )
        return self.last_seq()

    def take(
        self, domain_id: int, name: str, limit: int, now_wall: float, skip_jobs: Iterable[str] = ()
    ) -> list[Row]:
        skip = list(skip_jobs)
        not_in = f" AND job NOT IN ({', '.join('?' * len(skip))})" if skip else ""
        cur = self._db.execute(
            "SELECT url, fp, depth, job, priority, attempts, id, fallback_from, request "
            f"FROM queue WHERE domain_id=? AND not_before<=?{not_in} "
            "ORDER BY priority DESC, id LIMIT ?",
            (domain_id, now_wall, *skip, limit),
        )
        return [Row(u, fp, d, j, p, name, a, i, f, rq) for u, fp, d, j, p, a, i, f, rq in cur]

    def fps_of(self, ids: Sequence[int]) -> dict[int, bytes]:
        """The fingerprints of the rows with these ids (those that exist)."""
        held: dict[int, bytes] = {}
        for chunk, marks in in_chunks(ids):
            held.update(self._db.execute(f"SELECT id, fp FROM queue WHERE id IN ({marks})", chunk))
        return held

    def vias(self, rows: Sequence[tuple[int, bytes]]) -> dict[int, str | None]:
        """The `via` of queued rows given as (row id, fingerprint): only the
        ids whose row holds that fingerprint (a row id a worker sent back
        is checked, not trusted)."""
        wanted = dict(rows)
        found: dict[int, str | None] = {}
        for chunk, marks in in_chunks(list(wanted)):
            cur = self._db.execute(f"SELECT id, fp, via FROM queue WHERE id IN ({marks})", chunk)
            found.update((i, via) for i, fp, via in cur if wanted[i] == fp)
        return found

    def find(self, domain_id: int, fps: Sequence[bytes]) -> dict[bytes, int]:
        """Row ids of queued fingerprints of one domain. Scans the domain's
        rows (there is no fingerprint index): only for late results that do
        not carry their row id (see fps_of), which are rarer still."""
        found: dict[bytes, int] = {}
        for chunk, marks in in_chunks(fps):
            cur = self._db.execute(
                f"SELECT fp, id FROM queue WHERE domain_id=? AND fp IN ({marks})",
                (domain_id, *chunk),
            )
            found.update(cur)
        return found

    def earliest_retry(self, domain_id: int) -> float | None:
        row = self._db.execute(
            "SELECT min(not_before) FROM queue WHERE domain_id=?", (domain_id,)
        ).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def delete_many(self, ids: Sequence[int]) -> set[int]:
        """Delete queued URLs by row id; returns the ids that were there.

        One statement per IN_CHUNK rows instead of one per URL (a store
        batch settles hundreds at once)."""
        gone: set[int] = set()
        for chunk, marks in in_chunks(ids):
            cur = self._tx.write(f"DELETE FROM queue WHERE id IN ({marks}) RETURNING id", chunk)
            gone.update(i for (i,) in cur)
        return gone

    def delete_one(self, row_id: int) -> bool:
        return self._tx.write("DELETE FROM queue WHERE id=?", (row_id,)).rowcount > 0

    def schedule_retry(self, row_id: int, attempts: int, not_before: float, error: str) -> None:
        self._tx.write(
            "UPDATE queue SET attempts=?, not_before=?, last_error=?, "
            "first_failed_at=coalesce(first_failed_at, ?) WHERE id=?",
            (attempts, not_before, error[:1000], time.time(), row_id),
        )

    def hand_over(self, row_id: int, job: str, fallback_from: str, error: str) -> None:
        """The URL goes to another job (on_failure), with fresh attempts."""
        self._tx.write(
            "UPDATE queue SET job=?, fallback_from=?, attempts=0, not_before=0, last_error=? "
            "WHERE id=?",
            (job, fallback_from, error[:1000], row_id),
        )

    def lowest(self, domain_id: int) -> Row | None:
        row = self._db.execute(
            "SELECT url, fp, depth, job, priority, attempts, id, request FROM queue "
            "WHERE domain_id=? ORDER BY priority ASC, id DESC LIMIT 1",
            (domain_id,),
        ).fetchone()
        if row is None:
            return None
        url, fp, depth, job, priority, attempts, row_id, request = row
        return Row(url, fp, depth, job, priority, "", attempts, row_id, request=request)

    def overflow(self, row: Row, reason: str) -> None:
        self._tx.write(
            "INSERT INTO overflow (url, fp, job, domain, priority, reason, dropped_at, request) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (row.url, row.fp, row.job, row.domain, row.priority, reason, time.time(), row.request),
        )

    def requeue(self, rows: Sequence[tuple[int, Row]]) -> None:
        """Queue known URLs again (revisits): no admission log entry (the seen
        set has them) and no job count (max_pages counts distinct URLs)."""
        self._tx.write_many(_INSERT_ROW, [_row_values(did, r) for did, r in rows])

    def job_rows(self, job: str) -> list[tuple[int, bytes, str]]:
        """(row id, fingerprint, domain) of every queued URL of a job."""
        cur = self._db.execute(
            "SELECT q.id, q.fp, d.name FROM queue q JOIN domains d ON d.id = q.domain_id "
            "WHERE q.job=?",
            (job,),
        )
        return [(i, fp, name) for i, fp, name in cur]

    def job_rows_count(self, job: str) -> int:
        """Queued URLs of a job (a scan: asked only while the job stores nothing)."""
        return int(self._db.execute("SELECT count(*) FROM queue WHERE job=?", (job,)).fetchone()[0])

    def total_rows(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM queue").fetchone()[0])

    def iter_fps(self) -> Iterator[bytes]:
        for table in ("queue", "dead_letters", "overflow"):
            for (fp,) in self._db.execute(f"SELECT fp FROM {table}"):  # fixed table names, no input
                yield fp

    def domain_count(self, job: str, domain: str) -> int:
        row = self._db.execute(
            "SELECT admitted FROM job_domain_counts WHERE job=? AND domain=?", (job, domain)
        ).fetchone()
        return 0 if row is None else int(row[0])

    def add_domain_counts(self, job: str, added: Mapping[str, int]) -> None:
        """Part of the next admission's transaction (not committed here)."""
        self._tx.write_many(
            "INSERT INTO job_domain_counts VALUES (?, ?, ?) ON CONFLICT(job, domain) "
            "DO UPDATE SET admitted = admitted + excluded.admitted",
            [(job, domain, count) for domain, count in added.items()],
        )

    def job_counts(self) -> dict[str, int]:
        return dict(self._db.execute("SELECT job, admitted FROM job_counts"))

    # --------------------------------------------------- admission log
    def last_seq(self) -> int:
        # AUTOINCREMENT keeps the counter even when trimming empties the table.
        row = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name='admitted'").fetchone()
        return 0 if row is None else int(row[0])

    def log_trimmed(self) -> bool:
        """Whether admissions were forgotten (a snapshot held them): replaying
        the log alone no longer gives every URL admitted."""
        row = self._db.execute("SELECT min(seq) FROM admitted").fetchone()
        return self.last_seq() > 0 and (row[0] is None or int(row[0]) > 1)

    def admitted_since(self, seq: int) -> Iterator[bytes]:
        for (fp,) in self._db.execute("SELECT fp FROM admitted WHERE seq > ? ORDER BY seq", (seq,)):
            yield fp

    def trim_admitted(self, upto: int) -> None:
        """Forget admissions that a durable snapshot already holds."""
        self._tx.write("DELETE FROM admitted WHERE seq <= ?", (upto,))
        self.commit()

    def requeue_dead(self, letters: list[DeadURL]) -> None:
        """Move dead letters back into the queue with fresh attempts (a dead
        letter's URL left the queue when it died, so it is not there twice)."""
        for letter in letters:
            did = self.domain_id(letter.domain)
            row = Row(letter.url, letter.fp, letter.depth, letter.job, letter.priority, "")
            row.request = letter.request
            self._tx.write(_INSERT_ROW, _row_values(did, row))
            self._tx.write("DELETE FROM dead_letters WHERE fp=?", (letter.fp,))
        self.commit()
