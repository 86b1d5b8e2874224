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
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

from nadird.common.logs import gate
from nadird.job.feeds import is_article, news_rank
from nadird.job.request import pack_wire
from nadird.job.spec import Job
from nadird.master.frontier.domains import DomainCache
from nadird.master.frontier.link_check import LinkCheck
from nadird.master.frontier.queues import Frontier
from nadird.master.frontier.seen import SeenSet
from nadird.master.observe import trace
from nadird.master.row import VIA_SEED, Row
from nadird.protocol.messages import PageResult

SEED_BONUS = 1000
# The links of one page: URLs, their fingerprints, the depth they enter at,
# the page's final URL ("" for seeds: their `via`), per URL its packed request
# (RequestSpec.pack(), None for a plain GET; empty when all are plain GETs),
# and the `via` of those read elsewhere than in the page (a sitemap), by fingerprint.
LinkBatch = tuple[
    Sequence[str], Sequence[bytes], int, str, Sequence[bytes | None], Mapping[bytes, str]
]
_NOWHERE: Mapping[bytes, str] = MappingProxyType({})
# Where a batch came from: the page's final URL and the worker that sent it.
Source = tuple[str, str]
# A page's links that may be new: URLs, fingerprints, packed requests, the
# fingerprints among them the seen set lacks.
Candidates = tuple[Sequence[str], Sequence[bytes], Sequence[bytes | None], set[bytes]]


def links_of(page: PageResult) -> LinkBatch:
    """A page's links as admission takes them: they enter one level deeper."""
    requests = [pack_wire(w) for w in page.link_requests]
    elsewhere = _NOWHERE
    if page.link_vias:
        pairs = zip(page.link_fps, page.link_vias, strict=True)
        elsewhere = {fp: via for fp, via in pairs if via}
    # The page that holds the links: the end of a redirect chain.
    via = page.final_url or page.url
    return page.links, page.link_fps, page.depth + 1, via, requests, elsewhere


def priority(job: Job, depth: int, url: str = "", hub: bool = False, known: bool = False) -> int:
    """Seeds first, then hub pages (job.hub_patterns), then by depth (a
    feeds job's `hub`: it answered as a feed or was learned; `known`: a revisit)."""
    return _priority(job, depth, url, hub_patterns(job), hub, known)


def _priority(
    job: Job,
    depth: int,
    url: str,
    hubs: tuple[re.Pattern[str], ...],
    hub: bool = False,
    known: bool = False,
) -> int:
    rank = job.priority + (SEED_BONUS if depth == 0 else 0) - depth
    if job.feeds:  # feeds, then articles, then listings, archives last (job/feeds.py)
        return rank + news_rank(url, any(p.search(url) for p in hubs), hub, known)
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
        # Whether rows keep their `via` (the page that led to them): about 75
        # bytes a queued URL, for the archive's metadata records only.
        self.keep_via = True
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
        return self.admit_many(job_name, [(urls, fps, depth, "", requests, _NOWHERE)])

    def admit_many(
        self,
        job_name: str,
        batches: Iterable[LinkBatch],
        sources: Sequence[Source] = (),
        articles: list[list[bytes]] | None = None,
    ) -> int:
        """Admit the links of several pages of one job in ONE frontier
        transaction (a results message carries dozens of pages: one commit
        each was the master's largest cost). Returns how many were new.
        `sources` (one per batch): the links came from a worker, the new ones
        are checked (link_check.py); without, they are the master's (seeds).
        `articles` gets, per batch, the fingerprints of the new links that
        are articles (a feeds job's rank: neither feeds, listings nor
        archive pages)."""
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
        keep_via = self.keep_via
        for index, (urls, fps, depth, referer, requests, elsewhere) in enumerate(batches):
            first = len(rows)
            via = (referer or VIA_SEED) if keep_via else None
            if articles is not None:
                articles.append([])
            if job.max_depth is not None and depth > job.max_depth:
                continue
            found = self._candidates(
                job, (urls, fps, requests), sources[index] if sources else None
            )
            if found is None:
                continue  # the common case: every link of the page is known
            urls, fps, packed, new = found
            for url, fp, request in zip(urls, fps, packed, strict=True):
                # `fp in seen` again: a link twice in one page was marked the first time.
                if fp not in new or fp in seen:
                    continue
                domain = self.domain_of(url)
                if len(rows) >= room or self._full(job_name, domain, cap, per_domain):
                    # Not marked seen: raising the cap later lets it in again.
                    self.capped[job_name] += 1
                    continue
                seen.mark(fp)
                per_domain[domain] += 1
                rank = _priority(job, depth, url, hubs)
                found_in = elsewhere.get(fp, via) if elsewhere and keep_via else via
                row = Row(url, fp, depth, job_name, rank, domain, request=request, via=found_in)
                rows.append(row)
                if articles is not None and is_article(url, any(p.search(url) for p in hubs)):
                    articles[-1].append(fp)
            if debug:
                trace.admitted(rows[first:], referer)
        if rows:
            if cap is not None:
                self._count_domains(job_name, per_domain)
            self.frontier.admit(rows)
            seen.seq = self.frontier.seq
        self.admitted[job_name] += len(rows)
        return len(rows)

    def _candidates(
        self,
        job: Job,
        links: tuple[Sequence[str], Sequence[bytes], Sequence[bytes | None]],
        source: Source | None,
    ) -> Candidates | None:
        """A page's links that may be new: its URLs, fingerprints and packed
        requests, and the fingerprints the seen set lacks (checked first when
        the links came from a worker); None when every link is known."""
        urls, fps, requests = links
        fresh = self.seen.absent(fps)
        if not fresh:
            return None
        packed = requests or (None,) * len(urls)
        if source is None:
            return urls, fps, packed, set(fresh)
        urls, fps, packed = self.check.fresh(job, source, (urls, fps, packed), fresh, self.seen)
        return urls, fps, packed, set(fps)

    def _full(self, job: str, domain: str, cap: int | None, added: Counter[str]) -> bool:
        """Whether the domain reached the job's max_pages_per_domain (`added`: this call's)."""
        return cap is not None and self._domain_count(job, domain) + added[domain] >= cap

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
