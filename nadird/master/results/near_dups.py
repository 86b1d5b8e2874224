"""Near-duplicate articles, decided where the index lives: on the master.

A worker sends each article's fingerprint (common/simhash.py) with its
page; before the records go to the store, each is looked up in the job's
index (state/neardup_db.py). A near-duplicate gets `near_duplicate_of`,
the URL of the first page of the job seen with that text; with
`near_duplicates: drop` its item is dropped too (the page is still stored, without data, so
its URL is settled and its fetch on record). Counted per (job, action).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from nadird.common.simhash import NEAR_BITS
from nadird.job.spec import Job
from nadird.master.state.neardup_db import NearDupTable
from nadird.store.base import PageRecord

MARKED, DROPPED = "marked", "dropped"


class NearDuplicates:
    def __init__(self, table: NearDupTable, job_of: Callable[[str], Job | None]) -> None:
        self._table = table
        self._job_of = job_of  # the job's current settings (reloads change them)
        self.counted: Counter[tuple[str, str]] = Counter()  # (job, MARKED or DROPPED)

    def check(self, records: list[PageRecord]) -> list[PageRecord]:
        """The records, near-duplicates marked (or their items dropped)."""
        for record in records:
            if record.simhash is not None:
                self._check(record, record.simhash)
        return records

    def _check(self, record: PageRecord, fingerprint: int) -> None:
        job = self._job_of(record.job)
        mode = "mark" if job is None else job.near_duplicates
        if mode == "keep":
            return
        url = record.final_url or record.url
        first = self._table.first_of(record.job, fingerprint, url, NEAR_BITS)
        if first is None or first == url:  # the first of its text (fetched again)
            return
        record.near_duplicate_of = first
        if mode == "drop":
            record.data = {}
        self.counted[record.job, DROPPED if mode == "drop" else MARKED] += 1
