"""Admission: which discovered URLs enter the frontier.

Workers send canonical URLs with their fingerprints; the master only applies
the job's caps and the Bloom filter. A URL is marked seen at the moment it is
admitted, so it can be handed to one worker only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from nadird.jobs import Job
from nadird.master.frontier import Entry, Frontier
from nadird.master.seen import SeenSet
from nadird.urls import domain_of


class Admission:
    def __init__(self, seen: SeenSet, frontier: Frontier, jobs: dict[str, Job]) -> None:
        self.seen = seen
        self.frontier = frontier
        self.jobs = jobs
        self.admitted: Counter[str] = Counter()
        self.capped: Counter[str] = Counter()

    def admit(self, job_name: str, urls: Sequence[str], fps: Sequence[bytes], depth: int) -> int:
        """Admit links found at `depth - 1`; returns how many were new."""
        job = self.jobs.get(job_name)
        if job is None or (job.max_depth is not None and depth > job.max_depth):
            return 0
        room = self._room(job)
        by_domain: dict[str, list[Entry]] = {}
        added = 0
        for url, fp in zip(urls, fps, strict=True):
            if fp in self.seen:
                continue
            if added >= room:
                # Not marked seen: raising max_pages later lets it in again.
                self.capped[job_name] += 1
                continue
            self.seen.add_new((fp,))
            by_domain.setdefault(domain_of(url), []).append(Entry(url, fp, depth, job_name))
            added += 1
        for domain, entries in by_domain.items():
            self.frontier.push(domain, entries)
        self.admitted[job_name] += added
        return added

    def _room(self, job: Job) -> float:
        if job.max_pages is None:
            return float("inf")
        return max(0, job.max_pages - self.admitted[job.name])
