"""Per job, what the alert rules scoped to a job (`job:`) count.

A counter bump per results message, failed fetch, stored record or dead
letter, no I/O: the same numbers the whole-master rules read, kept by job.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from nadird.master.results.articles import ArticleTallies
from nadird.store.base import PageRecord


class JobTallies:
    def __init__(self) -> None:
        self.stored: Counter[str] = Counter()  # records written this run
        self.dead_letters: Counter[str] = Counter()  # URLs dead-lettered since start
        self._pages: dict[str, Counter[str]] = {}  # job -> domain -> pages answered
        self._errors: dict[str, Counter[str]] = {}  # job -> domain -> failed fetches
        self.articles = ArticleTallies()  # article items' generic steps and given-up pages

    def answered(self, job: str, domain: str, pages: int) -> None:
        self._pages.setdefault(job, Counter())[domain] += pages

    def failed(self, job: str, domain: str) -> None:
        self._errors.setdefault(job, Counter())[domain] += 1

    def durable(self, records: Sequence[PageRecord]) -> None:
        self.stored.update(r.job for r in records)

    def domains(self, job: str) -> dict[str, tuple[int, int]]:
        """domain -> (pages answered, errors) of the job since start."""
        errors = self._errors.get(job, Counter())
        return {d: (n, errors[d]) for d, n in self._pages.get(job, Counter()).items()}
