"""From a page's canonical links to the ones a job follows.

Order of the checks, cheapest and most general first: tracking/session
parameters stripped (so variants collapse before dedup), then spider-trap
guards, the job's scope and patterns, and the per-domain page cap.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, OrderedDict
from collections.abc import Iterable

from nadird.common.errors import InvalidURL
from nadird.common.urls import ParamStripper, canonicalize, domain_of
from nadird.config import FetchConfig, TrapConfig
from nadird.job.link_rules import LinkFilter
from nadird.job.spec import Job
from nadird.protocol.messages import PageResult


class TrapGuard:
    """Refuses URLs shaped like spider traps: too long, too deep, or a path
    that repeats itself (/a/b/a/b/a/b/..., calendars linking forever)."""

    __slots__ = ("_config",)

    def __init__(self, config: TrapConfig) -> None:
        self._config = config

    def allows(self, url: str) -> bool:
        cfg = self._config
        if len(url) > cfg.max_url_length:
            return False
        segments = [s for s in _path(url).split("/") if s]
        if len(segments) > cfg.max_path_depth:
            return False
        # A segment can only repeat too often in a path that long: most
        # paths are short, and this runs for every link of every page.
        if len(segments) <= cfg.max_segment_repeats:
            return True
        return max(Counter(segments).values()) <= cfg.max_segment_repeats


def _path(url: str) -> str:
    """The path of a canonical URL, by string search (urlsplit costs more)."""
    rest = url[url.find("://") + 3 :]
    end = len(rest)
    for stop in "?#":
        found = rest.find(stop)
        if 0 <= found < end:
            end = found
    start = rest.find("/", 0, end)
    return rest[start:end] if start >= 0 else "/"


class DomainCounts:
    """Pages this worker fetched per (job, domain): a lower bound of the
    cluster's count, so a domain this worker alone has filled is surely full."""

    def __init__(self, max_entries: int = 100_000) -> None:
        self._counts: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._max = max_entries

    def add(self, job: str, domain: str) -> None:
        key = (job, domain)
        self._counts[key] = self._counts.get(key, 0) + 1
        self._counts.move_to_end(key)
        if len(self._counts) > self._max:
            self._counts.popitem(last=False)

    def get(self, job: str, domain: str) -> int:
        return self._counts.get((job, domain), 0)


class ReportedLinks:
    """Links the earlier pages of one bag already reported to the master.

    A site's menus and footers repeat on every page: sending them again with
    each page made the master check the same fingerprints over and over. A
    link is left out only if it went out at the same or a smaller depth, so
    a job's max_depth sees every link at the least depth the bag found it.
    """

    __slots__ = ("_depths",)

    def __init__(self) -> None:
        self._depths: dict[bytes, int] = {}

    def new_only(self, page: PageResult) -> PageResult:
        depths = self._depths
        keep: list[int] = []
        for i, fp in enumerate(page.link_fps):
            sent = depths.get(fp)
            if sent is None or sent > page.depth:
                depths[fp] = page.depth
                keep.append(i)
        if len(keep) == len(page.link_fps):
            return page
        requests, vias = page.link_requests, page.link_vias
        return dataclasses.replace(
            page,
            links=[page.links[i] for i in keep],
            link_fps=[page.link_fps[i] for i in keep],
            link_requests=[requests[i] for i in keep] if requests else [],
            link_vias=[vias[i] for i in keep] if vias else [],
        )


class LinkPipeline:
    """One per bag: the job's link rules, as seen from pages of the bag's domain."""

    def __init__(self, job: Job, fetch: FetchConfig, counts: DomainCounts) -> None:
        self._job = job
        self.strip = ParamStripper(
            job.strip_params if job.strip_params is not None else fetch.strip_params
        )
        self._traps = TrapGuard(fetch.traps)
        self._counts = counts
        self._filters: dict[str, LinkFilter] = {}

    def scope(self, page_url: str) -> LinkFilter:
        """Scope is judged from the page's own domain (it may have redirected away)."""
        domain = domain_of(page_url)
        found = self._filters.get(domain)
        if found is None:
            found = self._filters[domain] = LinkFilter(self._job.links, domain)
        return found

    def full(self, domain: str) -> bool:
        cap = self._job.max_pages_per_domain
        return cap is not None and self._counts.get(self._job.name, domain) >= cap

    def allowed(self, url: str, scope: LinkFilter) -> bool:
        if not self._traps.allows(url) or not scope.allowed(url):
            return False
        return self._job.max_pages_per_domain is None or not self.full(domain_of(url))

    def follow(self, urls: Iterable[str], page_url: str) -> list[str]:
        """Canonical links -> stripped, deduped, checked links, in order."""
        scope = self.scope(page_url)
        seen: set[str] = set()
        kept: list[str] = []
        for url in urls:
            url = self.strip(url)
            if url in seen:
                continue
            seen.add(url)
            if self.allowed(url, scope):
                kept.append(url)
        return kept

    def follow_raw(self, urls: Iterable[str], page_url: str) -> list[str]:
        """As follow(), for URLs not canonical yet (sitemaps); bad ones are skipped."""
        canonical: list[str] = []
        for url in urls:
            try:
                canonical.append(canonicalize(url))
            except InvalidURL:
                continue
        return self.follow(canonical, page_url)
