"""robots.txt files workers fetched, kept by the master per origin and handed
out with the next bag of that domain: a worker new to a domain does not fetch
robots.txt again at once. A cache, not state: its own small SQLite file,
written without fsync (losing it costs one fetch per host). Notes that could
not be written (disk full) are kept in memory, still handed out, and written
when `retry` succeeds.

Each note's Crawl-delay (or Request-rate interval) for fetch.robots.user_agent
is read when it arrives (the worker's parser, robots_delay.py) and kept in the
row, indexed where it is set: the revisit planner's pace of a domain
(revisit_pace.py) is loaded at start from those rows alone, and moves with
every new note."""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path

from nadird.common.robots_delay import text_delay
from nadird.common.urls import domain_of
from nadird.master.observe.health import StateHealth
from nadird.master.state.redo import is_write_failure
from nadird.protocol.messages import RobotsNote

# Notes kept in memory while the file cannot be written (the newest win).
MAX_UNSAVED = 10_000
# origin, allow_all, text, fetched_at (wall clock), crawl_delay (0: none)
NoteRow = tuple[str, int, str, float, float]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS robots (
    origin TEXT PRIMARY KEY,
    allow_all INTEGER NOT NULL,
    text TEXT NOT NULL,
    fetched_at REAL NOT NULL,
    crawl_delay REAL NOT NULL DEFAULT 0
);
"""
_DELAY_INDEX = (
    "CREATE INDEX IF NOT EXISTS robots_delay ON robots (origin, crawl_delay) WHERE crawl_delay > 0"
)


def of_domain(notes: Iterable[RobotsNote], domain: str) -> list[RobotsNote]:
    """The notes a bag of `domain` may leave: for origins of that domain, none
    older than zero. Taken as sent, a worker could hand every later worker a
    robots.txt of its own making for any site (Disallow: / stops it), or one
    that never grows old. A note left out costs one fetch of robots.txt."""
    kept = []
    for note in notes:
        if domain_of(note.origin) != domain:
            continue
        if not note.age >= 0:  # NaN too
            note = dataclasses.replace(note, age=0.0)
        kept.append(note)
    return kept


class RobotsNotes:
    def __init__(
        self,
        path: str | Path,
        max_age: float = 3600.0,
        health: StateHealth | None = None,
        token: str = "nadird",
    ) -> None:
        self.max_age = max_age
        self.token = token  # the robots.txt product token (fetch.robots.user_agent)
        self._health = health
        self.name = Path(path).name
        self._unsaved: dict[str, NoteRow] = {}
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.executescript(_SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(robots)")}
        if "crawl_delay" not in columns:  # a file from before: its delays come with new notes
            self._db.execute("ALTER TABLE robots ADD COLUMN crawl_delay REAL NOT NULL DEFAULT 0")
        self._db.execute(_DELAY_INDEX)

    def remember(self, notes: Iterable[RobotsNote]) -> dict[str, float]:
        """Keep the notes; returns each one's Crawl-delay by origin (0: none)."""
        now = time.time()
        delays: dict[str, float] = {}
        for n in notes:
            delay = delays[n.origin] = 0.0 if n.allow_all else text_delay(n.text, self.token)
            self._unsaved.pop(n.origin, None)  # re-inserted last: the newest stay
            self._unsaved[n.origin] = (n.origin, int(n.allow_all), n.text, now - n.age, delay)
        while len(self._unsaved) > MAX_UNSAVED:
            del self._unsaved[next(iter(self._unsaved))]
        if self._health is None or self._health.may_try(self.name):
            self.retry()
        return delays

    def delays(self) -> list[tuple[str, float]]:
        """(origin, Crawl-delay) of every note that sets one (the partial index)."""
        cur = self._db.execute("SELECT origin, crawl_delay FROM robots WHERE crawl_delay > 0")
        kept = {str(origin): float(delay) for origin, delay in cur}
        kept.update((row[0], row[4]) for row in self._unsaved.values())
        return [(origin, delay) for origin, delay in kept.items() if delay > 0]

    def retry(self) -> None:
        """Write the notes kept in memory."""
        if not self._unsaved:
            return
        try:
            self._db.execute("BEGIN")  # all or none (and one commit, not one per note)
            self._db.executemany(
                "INSERT OR REPLACE INTO robots (origin, allow_all, text, fetched_at, crawl_delay) "
                "VALUES (?, ?, ?, ?, ?)",
                list(self._unsaved.values()),
            )
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            with contextlib.suppress(sqlite3.Error):
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
            if self._health is None or not is_write_failure(exc):
                raise
            self._health.failed(self.name, exc)
            return
        self._unsaved.clear()
        if self._health is not None:
            self._health.ok(self.name)

    def for_origins(self, origins: Iterable[str]) -> list[RobotsNote]:
        now = time.time()
        notes = []
        for origin in origins:
            unsaved = self._unsaved.get(origin)
            row = (
                unsaved[1:4]
                if unsaved is not None
                else self._db.execute(
                    "SELECT allow_all, text, fetched_at FROM robots WHERE origin=?", (origin,)
                ).fetchone()
            )
            if row is not None and now - row[2] < self.max_age:
                notes.append(RobotsNote(origin, bool(row[0]), row[1], max(0.0, now - row[2])))
        return notes

    def for_host(self, host: str) -> list[tuple[str, bool, float]]:
        """(origin, allow_all, age in seconds) of the notes of one host, any
        scheme or port; two index range scans (the origin is the key)."""
        now = time.time()
        found: dict[str, tuple[int, float]] = {}
        for scheme in ("http://", "https://"):
            low = scheme + host
            rows = self._db.execute(  # ';' follows ':' : the range holds every port
                "SELECT origin, allow_all, fetched_at FROM robots WHERE origin >= ? AND origin < ?",
                (low, low + ";"),
            ).fetchall()
            for origin, allow_all, fetched_at in rows:
                if origin == low or origin.startswith(low + ":"):
                    found[origin] = (allow_all, fetched_at)
        for origin, allow_all, _, fetched_at, _ in self._unsaved.values():
            netloc = origin.partition("://")[2]
            if netloc == host or netloc.startswith(host + ":"):
                found[origin] = (allow_all, fetched_at)
        return [(o, bool(a), max(0.0, now - t)) for o, (a, t) in sorted(found.items())]

    def close(self) -> None:
        self._db.close()
