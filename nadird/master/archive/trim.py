"""The index of captures follows the archive's files: when a WARC file is no
longer in warc.dir (its operator deleted it, or moved it to other storage),
its rows leave archive.db.

The master looks when it starts and whenever it closes a file. The rows are
not indexed by file (that would cost every insert about as many bytes
again), so dropping them scans the table: in PARTS steps, each a range of
the key (the pages whose fingerprint begins with one byte), as many as fit
in BUDGET per tick of the master's housekeeping, so that the master is not
held long however large the table. A master stopped midway finds the files
gone again at its next start.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from nadird.common.logs import get_logger
from nadird.master.archive.copies import Copies

log = get_logger()
PARTS = 256  # fingerprints' first byte
BUDGET = 0.02  # seconds of steps per tick
OPEN = ".open"  # a file being written (files.py)


class Trim:
    def __init__(self, copies: Copies, directory: Path, stats: Counter[str]) -> None:
        self._copies = copies
        self._directory = directory
        self._stats = stats
        self._files: dict[int, str] = {}  # being dropped: id -> name
        self._part = 0
        self._rows = 0

    def look(self) -> None:
        """Notice the files gone. One batch at a time: files gone meanwhile
        are noticed at the next look."""
        if not self._files:
            self._files = self._copies.gone(self._present)
            self._part = self._rows = 0

    def run(self, budget: float = BUDGET) -> bool:
        """Steps for up to `budget` seconds; True while more remain."""
        until = time.monotonic() + budget
        while self.step():
            if time.monotonic() >= until:
                return True
        return False

    def step(self) -> bool:
        """Drop one part of the rows of the files gone; True while more remain."""
        if not self._files:
            return False
        dropped = self._copies.drop_part(self._files, self._part)
        self._rows += dropped
        self._stats["warc_captures_dropped"] += dropped
        self._part += 1
        if self._part < PARTS:
            return True
        self._copies.forget_files(self._files)
        names = sorted(self._files.values())
        log.info("warc_captures_dropped", files=len(names), rows=self._rows, first=names[0])
        self._files = {}
        return False

    def _present(self, name: str) -> bool:
        where = self._directory / name
        return where.exists() or where.with_name(name + OPEN).exists()
