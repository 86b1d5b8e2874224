"""The near-duplicate index of article texts, kept in frontier.db.

Per job, the first page seen with each text: its URL (near_dup_texts) and
its fingerprint under each of its BANDS bands. A band's bucket, keyed by
(job, band number, the band's 16 bits), packs every fingerprint of the
bucket with its text's id, 16 bytes each, in rows of at most CHUNK_ENTRIES
entries (near_dup_buckets, keyed by the bucket's key and the chunk's
number). A lookup reads the BANDS buckets as BANDS ranges of keys and
compares the packed fingerprints with numpy in one step; a new text appends
its entry to the last chunk of each of its buckets. A page whose text is a
near-duplicate is not indexed itself: later copies are matched against the
first.

Why buckets rather than a row per fingerprint and band (as before): with
rows, a lookup made a Python tuple of every fingerprint sharing a band and
compared them one by one, ~0.5 µs each, and a band holds about articles /
65,536 of them, so a lookup took 0.06 ms at 1 million articles and 0.35 ms
at 10 million. With buckets it reads BANDS ranges whatever the number of
articles and compares their entries in C (~1 ns each): the lookup time
stays flat at millions (scripts/bench_neardup.py). A new text rewrites one
chunk of each of its BANDS buckets, at most 4 KB each whatever the number
of articles.

Memory does not grow with the articles (SQLite's page cache is fixed); the
disk takes ~64 bytes of buckets and the URL's row per indexed text. Written
through the frontier's redo transaction, so it commits with the frontier,
survives a restart and is replicated with frontier.db. A frontier.db with
the former table is converted when it is opened (`_convert`), once.
"""

from __future__ import annotations

import functools
import itertools
import sqlite3
from typing import TYPE_CHECKING

from nadird.common.logs import get_logger
from nadird.common.simhash import BAND_BITS, BANDS, bands
from nadird.master.state.redo import RedoTransaction

if TYPE_CHECKING:
    import numpy as np

log = get_logger()

_SCHEMA = """
CREATE TABLE IF NOT EXISTS near_dup_jobs (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS near_dup_texts (id INTEGER PRIMARY KEY, url TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS near_dup_buckets (key INTEGER PRIMARY KEY, entries BLOB NOT NULL);
"""
# A bucket's key: the job's id above the band number and the band's bits.
_JOB_SHIFT = BAND_BITS + (BANDS - 1).bit_length()
# A bucket is stored in chunks of at most CHUNK_ENTRIES entries (4 KB, one
# SQLite page), each a row keyed by the bucket's key and the chunk's number:
# a new text rewrites one chunk per band, whatever the bucket's size.
CHUNK_ENTRIES = 255
CHUNK_BITS = 16
# One entry of a bucket: the fingerprint (unsigned, for the bit count) and
# its text's id, 8 bytes each (entry_dtype()).
ENTRY_BYTES = 16
_UNSIGNED = (1 << 64) - 1
_FIND = "SELECT key, entries FROM near_dup_buckets WHERE " + " OR ".join(
    ["key BETWEEN ? AND ?"] * BANDS
)
_PUT = (
    "INSERT INTO near_dup_buckets (key, entries) VALUES (?, ?)"
    " ON CONFLICT(key) DO UPDATE SET entries = excluded.entries"
)


@functools.cache
def entry_dtype() -> np.dtype:
    """A bucket's entry for numpy, imported on the first use: a master
    without an article job never looks a text up, and does without it
    (its start time and memory, docs/BENCHMARKS.md)."""
    import numpy as np

    dtype = np.dtype([("simhash", "<u8"), ("text", "<i8")])
    assert dtype.itemsize == ENTRY_BYTES
    return dtype


def _convert(db: sqlite3.Connection) -> None:
    """Move a former near_dup_bands table (a row per fingerprint and band)
    into buckets, in one transaction; nothing to do on a new file."""
    found = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'near_dup_bands'").fetchone()
    if found is None:
        return
    db.execute("BEGIN IMMEDIATE")
    import numpy as np

    rows = db.execute("SELECT band, simhash, text FROM near_dup_bands ORDER BY band, text")
    moved = 0
    for bucket, entries in itertools.groupby(rows, key=lambda row: int(row[0])):
        packed = np.array([(s & _UNSIGNED, t) for _, s, t in entries], dtype=entry_dtype())
        for number, start in enumerate(range(0, len(packed), CHUNK_ENTRIES)):
            chunk = packed[start : start + CHUNK_ENTRIES].tobytes()
            db.execute(_PUT, ((bucket << CHUNK_BITS) | number, chunk))
        moved += len(packed)
    db.execute("DROP TABLE near_dup_bands")
    db.execute("COMMIT")
    log.info("near_dup_index_converted", entries=moved)


def _appended(bucket: int, chunks: dict[int, bytes], entry: bytes) -> tuple[int, bytes]:
    """(key, entries) of the bucket's last chunk with `entry` added, or of a
    new chunk after it when the last one is full."""
    first = bucket << CHUNK_BITS
    last = max((key for key in chunks if key >> CHUNK_BITS == bucket), default=first)
    held = chunks.get(last, b"")
    if len(held) >= CHUNK_ENTRIES * ENTRY_BYTES:
        return last + 1, entry
    return last, held + entry


class NearDupTable:
    def __init__(self, db: sqlite3.Connection, tx: RedoTransaction) -> None:
        self._db = db
        self._tx = tx
        db.executescript(_SCHEMA)
        _convert(db)
        self._jobs: dict[str, int] = {
            str(name): int(id_) for id_, name in db.execute("SELECT id, name FROM near_dup_jobs")
        }

    def _job_id(self, job: str) -> int:
        found = self._jobs.get(job)
        if found is None:
            cur = self._tx.write("INSERT INTO near_dup_jobs (name) VALUES (?)", (job,))
            found = self._jobs[job] = int(cur.lastrowid or 0)
        return found

    def _buckets(self, job: str, fingerprint: int) -> list[int]:
        high = self._job_id(job) << _JOB_SHIFT
        return [high | band for band in bands(fingerprint)]

    def first_of(self, job: str, fingerprint: int, url: str, near_bits: int) -> str | None:
        """The URL of the job's first text within `near_bits` of the
        fingerprint; None when there is none, and then `url` is indexed as
        the first of its text."""
        import numpy as np  # entry_dtype()

        buckets = self._buckets(job, fingerprint)
        ranges = [k for b in buckets for k in (b << CHUNK_BITS, ((b + 1) << CHUNK_BITS) - 1)]
        chunks = {int(key): bytes(entries) for key, entries in self._db.execute(_FIND, ranges)}
        entries = np.frombuffer(b"".join(chunks.values()), dtype=entry_dtype())
        apart = np.bitwise_count(entries["simhash"] ^ np.uint64(fingerprint & _UNSIGNED))
        near = entries["text"][apart <= near_bits]
        if near.size:
            row = self._db.execute("SELECT url FROM near_dup_texts WHERE id=?", (int(near.min()),))
            return str(row.fetchone()[0])
        cur = self._tx.write("INSERT INTO near_dup_texts (url) VALUES (?)", (url,))
        entry = np.array([(fingerprint & _UNSIGNED, int(cur.lastrowid or 0))], dtype=entry_dtype())
        added = entry.tobytes()
        self._tx.write_many(_PUT, [_appended(b, chunks, added) for b in buckets])
        return None

    def texts(self) -> int:
        """Texts indexed (first of their kind), all jobs."""
        return int(self._db.execute("SELECT count(*) FROM near_dup_texts").fetchone()[0])
