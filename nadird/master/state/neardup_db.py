"""The near-duplicate index of article texts, kept in frontier.db.

Per job, the first page seen with each text: its URL (near_dup_texts) and
its fingerprint's BANDS bands (near_dup_bands), each row keyed by
(job, band number, the band's 16 bits) and holding the whole fingerprint,
so a lookup reads BANDS short runs of one index and compares fingerprints
without touching another table. A page whose text is a near-duplicate is
not indexed itself: later copies are matched against the first.

Memory does not grow with the articles (SQLite's page cache is fixed);
the disk takes about a hundred bytes and the URL per indexed text, and a
lookup costs BANDS index probes whatever the number of articles, plus the
fingerprints that share a band (about articles / 65,536 per band):
scripts/bench_neardup.py measures both. Written through the frontier's redo
transaction, so it commits with the frontier, survives a restart and is
replicated with frontier.db.
"""

from __future__ import annotations

import sqlite3

from nadird.common.simhash import BAND_BITS, BANDS, bands, distance
from nadird.master.state.redo import RedoTransaction

_SCHEMA = """
CREATE TABLE IF NOT EXISTS near_dup_jobs (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS near_dup_texts (id INTEGER PRIMARY KEY, url TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS near_dup_bands (
    band INTEGER NOT NULL,
    simhash INTEGER NOT NULL,
    text INTEGER NOT NULL,
    PRIMARY KEY (band, simhash, text)
) WITHOUT ROWID;
"""
# A band's key: the job's id above the band number and the band's bits.
_JOB_SHIFT = BAND_BITS + (BANDS - 1).bit_length()
_FIND = "SELECT simhash, text FROM near_dup_bands WHERE band IN (" + ",".join("?" * BANDS) + ")"


class NearDupTable:
    def __init__(self, db: sqlite3.Connection, tx: RedoTransaction) -> None:
        self._db = db
        self._tx = tx
        db.executescript(_SCHEMA)
        self._jobs: dict[str, int] = {
            str(name): int(id_) for id_, name in db.execute("SELECT id, name FROM near_dup_jobs")
        }

    def _job_id(self, job: str) -> int:
        found = self._jobs.get(job)
        if found is None:
            cur = self._tx.write("INSERT INTO near_dup_jobs (name) VALUES (?)", (job,))
            found = self._jobs[job] = int(cur.lastrowid or 0)
        return found

    def _keys(self, job: str, fingerprint: int) -> list[int]:
        high = self._job_id(job) << _JOB_SHIFT
        return [high | band for band in bands(fingerprint)]

    def first_of(self, job: str, fingerprint: int, url: str, near_bits: int) -> str | None:
        """The URL of the job's first text within `near_bits` of the
        fingerprint; None when there is none, and then `url` is indexed as
        the first of its text."""
        keys = self._keys(job, fingerprint)
        near = [
            int(text)
            for simhash, text in self._db.execute(_FIND, keys)
            if distance(int(simhash), fingerprint) <= near_bits
        ]
        if near:
            row = self._db.execute("SELECT url FROM near_dup_texts WHERE id=?", (min(near),))
            return str(row.fetchone()[0])
        cur = self._tx.write("INSERT INTO near_dup_texts (url) VALUES (?)", (url,))
        text = int(cur.lastrowid or 0)
        self._tx.write_many(
            "INSERT OR IGNORE INTO near_dup_bands (band, simhash, text) VALUES (?, ?, ?)",
            [(key, fingerprint, text) for key in keys],
        )
        return None

    def texts(self) -> int:
        """Texts indexed (first of their kind), all jobs."""
        return int(self._db.execute("SELECT count(*) FROM near_dup_texts").fetchone()[0])
