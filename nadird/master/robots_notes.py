"""robots.txt files workers fetched, kept by the master per origin and handed
out with the next bag of that domain: a worker new to a domain does not fetch
robots.txt again at once. A cache, not state: its own small SQLite file,
written without fsync (losing it costs one fetch per host)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path

from nadird.protocol.messages import RobotsNote

_SCHEMA = """
CREATE TABLE IF NOT EXISTS robots (
    origin TEXT PRIMARY KEY,
    allow_all INTEGER NOT NULL,
    text TEXT NOT NULL,
    fetched_at REAL NOT NULL
);
"""


class RobotsNotes:
    def __init__(self, path: str | Path, max_age: float = 3600.0) -> None:
        self.max_age = max_age
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.executescript(_SCHEMA)

    def remember(self, notes: Iterable[RobotsNote]) -> None:
        now = time.time()
        self._db.executemany(
            "INSERT OR REPLACE INTO robots VALUES (?, ?, ?, ?)",
            [(n.origin, int(n.allow_all), n.text, now - n.age) for n in notes],
        )

    def for_origins(self, origins: Iterable[str]) -> list[RobotsNote]:
        now = time.time()
        notes = []
        for origin in origins:
            row = self._db.execute(
                "SELECT allow_all, text, fetched_at FROM robots WHERE origin=?", (origin,)
            ).fetchone()
            if row is not None and now - row[2] < self.max_age:
                notes.append(RobotsNote(origin, bool(row[0]), row[1], max(0.0, now - row[2])))
        return notes

    def close(self) -> None:
        self._db.close()
