"""Admission: which discovered URLs enter the frontier, and at what priority.

Workers send canonical URLs with their fingerprints; the master checks those
the Bloom filter does not know (link_check.py), then applies the job's caps.
A URL is marked seen at the moment it is admitted, so it can be handed to
one worker only; the frontier writes it to disk (with an admission sequence
number) in the transaction that will later hold the deletion of the page that
found it (see db.py).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from nadird.jobs import Job
from nadird.logs import gate
from nadird.master.frontier.db import Row
from nadird.master.frontier.domains import DomainCache
from nadird.master.frontier.link_check import LinkCheck
from nadird.master.frontier.queues import Frontier
from nadird.master.frontier.seen import SeenSet
from nadird.master.service import trace

SEED_BONUS = 1000
# The links of one page: URLs, their fingerprints, the depth they enter at,
# the page's URL ("" for seeds), and per URL its packed request
# (RequestSpec.pack(), None for a plain GET; empty when all are plain GETs).
LinkBatch = tuple[Sequence[str], Sequence[bytes], int, str, Sequence[bytes | None]]
# Where a batch came from: the page's final URL and the worker that sent it.
Source = tuple[str, str]


def priority(job: Job, depth: int, url: str = "") -> int:
    """Seeds first, then hub pages (job.hub_patterns), then by depth."""
    return _priority(job, depth, url, hub_patterns(job))


def _priority(job: Job, depth: int, url: str, hubs: tuple[re.Pattern[str], ...]) -> int:
    rank = job.priority + (SEED_BONUS if depth == 0 else 0) - depth
    for pattern in hubs:  # a loop, not any(): this runs for every new URL
        if pattern.search(url):
            return rank + job.hub_bonus
    return rank


def hub_patterns(job: Job) -> tuple[re.Pattern[str], ...]:
    """The job's compiled hub patterns; none when its hub bonus is 0."""
    return _compiled(tuple(job.hub_patterns)) if job.hub_bonus else ()


@functools.lru_cache(maxsize=64)
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    # Keyed by the patterns themselves: a reloaded job with new ones compiles afresh.
    return tuple(re.compile(p) for p in patterns)


class Admission:
    def __init__(self, seen: SeenSet, frontier: Frontier, jobs: dict[str, Job]) -> None:
        self.seen = seen
        self.frontier = frontier
        self.jobs = jobs
        # Kept on disk so max_pages holds across restarts.
        self.admitted: Counter[str] = Counter(frontier.db.job_counts())
        self.capped: Counter[str] = Counter()
        self.domain_of = DomainCache()
        self.check = LinkCheck()
        # (job, domain) -> URLs admitted, for jobs with max_pages_per_domain;
        # filled from disk on first use.
        self._domains: dict[tuple[str, str], int] = {}

    def admit(
        self,
        job_name: str,
        urls: Sequence[str],
        fps: Sequence[bytes],
        depth: int,
        requests: Sequence[bytes | None] = (),
    ) -> int:
        """Admit links found at `depth - 1`; returns how many were new."""
        return self.admit_many(job_name, [(urls, fps, depth, "", requests)])

    def admit_many(
        self, job_name: str, batches: Iterable[LinkBatch], sources: Sequence[Source] = ()
    ) -> int:
        """Admit the links of several pages of one job in ONE frontier
        transaction (a results message carries dozens of pages: one commit
        each was the master's largest cost). Returns how many were new.
        With `sources` (one per batch) the links came from a worker: the new
        ones are checked first (link_check.py); without, they are the
        master's own (seeds)."""
        job = self.jobs.get(job_name)
        if job is None:
            return 0
        room = self._room(job)
        rows: list[Row] = []
        seen = self.seen
        per_domain: Counter[str] = Counter()  # this call's admissions, for the domain cap
        cap = job.max_pages_per_domain
        hubs = hub_patterns(job)
        debug = gate.debug
        for index, (urls, fps, depth, referer, requests) in enumerate(batches):
            first = len(rows)
            if job.max_depth is not None and depth > job.max_depth:
                continue
            fresh = seen.absent(fps)
            if not fresh:
                continue  # the common case: every link of the page is known
            packed = requests or (None,) * len(urls)
            if sources:
                urls, fps, packed = self.check.fresh(
                    job, sources[index], (urls, fps, packed), fresh, seen
                )
                fresh = fps
            new = set(fresh)
            for url, fp, request in zip(urls, fps, packed, strict=True):
                # `fp in seen` again: a link twice in one page was marked the first time.
                if fp not in new or fp in seen:
                    continue
                domain = self.domain_of(url)
                if len(rows) >= room or (
                    cap is not None
                    and self._domain_count(job_name, domain) + per_domain[domain] >= cap
                ):
                    # Not marked seen: raising the cap later lets it in again.
                    self.capped[job_name] += 1
                    continue
                seen.mark(fp)
                per_domain[domain] += 1
                rank = _priority(job, depth, url, hubs)
                rows.append(Row(url, fp, depth, job_name, rank, domain, request=request))
            if debug:
                trace.admitted(rows[first:], referer)
        if rows:
            if cap is not None:
                self._count_domains(job_name, per_domain)
            self.frontier.admit(rows)
            seen.seq = self.frontier.seq
        self.admitted[job_name] += len(rows)
        return len(rows)

    def _domain_count(self, job: str, domain: str) -> int:
        count = self._domains.get((job, domain))
        if count is None:
            count = self._domains[(job, domain)] = self.frontier.db.domain_count(job, domain)
        return count

    def _count_domains(self, job: str, added: Counter[str]) -> None:
        """Counted in the same transaction as the admissions (kept across restarts)."""
        for domain, count in added.items():
            self._domains[(job, domain)] = self._domain_count(job, domain) + count
        self.frontier.db.add_domain_counts(job, added)

    def _room(self, job: Job) -> float:
        if job.max_pages is None:
            return float("inf")
        return max(0, job.max_pages - self.admitted[job.name])
