"""Where an `nadird export --cursor FILE` left off, so a downstream indexer
can poll what is new without keeping the time itself.

The file holds a time and the records already written from that time on:
the next export writes the records fetched at or after the time that it
does not list (a page fetched again has a new fetch time: it is written
again, as what is new of it). A record can reach the store a while after
its fetch time (a worker's results travel, the store writes in batches),
after records fetched later: so the time kept is the latest fetch time
written less LAG, and the records from it on are listed (by fingerprint and
fetch time) rather than skipped by time. A record stored more than LAG
after its fetch could be missed; one written when the export failed before
the file was replaced is written again (at least once, never lost).

The store has no index on fetch time, so an export still reads every
record; what the cursor saves is the indexer's bookkeeping and the lines.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from nadird.store.base import PageRecord

LAG = 600.0  # seconds a record may reach the store after its fetch time


class CursorError(ValueError):
    """The cursor file cannot be read as one (its path and why)."""


class Cursor:
    def __init__(self, path: str, since: float | None = None) -> None:
        self.path = Path(path)
        self.since = since  # None: from the first record
        self._written: set[tuple[str, float]] = set()
        self._latest: float | None = None
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        try:
            state = json.loads(self.path.read_text(encoding="utf-8"))
            self.since = float(state["since"])
            self._written = {(str(fp), float(at)) for fp, at in state["written"]}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CursorError(f"{self.path}: not a cursor file ({exc})") from None

    def wants(self, record: PageRecord) -> bool:
        """Whether the record is new since the last export (and note it)."""
        if self.since is not None and record.fetched_at < self.since:
            return False
        key = (record.fp.hex(), record.fetched_at)
        if key in self._written:
            return False
        self._written.add(key)
        if self._latest is None or record.fetched_at > self._latest:
            self._latest = record.fetched_at
        return True

    def save(self) -> None:
        """Replace the file (atomically) with where this export left off."""
        since = self.since
        if self._latest is not None:
            since = max(since or -float("inf"), self._latest - LAG)
        written = sorted(k for k in self._written if since is None or k[1] >= since)
        state = {"since": since if since is not None else 0.0, "written": written}
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(state), encoding="utf-8")
        os.replace(tmp, self.path)
