"""From one URL of a bag to one PageResult: fetch, parse, extract, discover."""

from __future__ import annotations

import time
from dataclasses import dataclass

from nadird.errors import FetchError
from nadird.jobs import Job
from nadird.logs import get_logger
from nadird.protocol.messages import PageResult
from nadird.urls import domain_of, fingerprint
from nadird.worker.fetcher import Fetcher, FetchOutcome
from nadird.worker.parser import (
    LinkFilter,
    content_checksum,
    decode_html,
    extract_fields,
    extract_links,
    parse_html,
)

log = get_logger()


@dataclass(frozen=True, slots=True)
class PageTask:
    url: str
    fp: bytes
    depth: int


class PageProcessor:
    """Knows the job and the domain of one bag; turns its URLs into results."""

    def __init__(
        self, fetcher: Fetcher, job: Job, domain: str, html_types: list[str], body_cap: int
    ) -> None:
        self._fetcher = fetcher
        self._job = job
        self._filters = {domain: LinkFilter(job.links, domain)}
        self._html_types = set(html_types)
        self._body_cap = body_cap

    async def process(self, task: PageTask) -> PageResult:
        started = time.time()
        try:
            outcome = await self._fetcher.fetch(task.url)
            return self._from_outcome(task, outcome, started)
        except FetchError as exc:
            return _error(task, started, f"{exc.kind}: {exc.detail}")
        except Exception as exc:  # a bad page must never stop the bag
            log.exception("page_failed", url=task.url)
            return _error(task, started, f"internal: {type(exc).__name__}: {exc}")

    def _from_outcome(self, task: PageTask, outcome: FetchOutcome, started: float) -> PageResult:
        data: dict[str, object] = {}
        links: list[str] = []
        error = None
        if outcome.content_type in self._html_types and outcome.status < 400:
            doc = parse_html(outcome.body, outcome.final_url, outcome.charset)
            if doc is None:
                error = "parse: document could not be parsed"
            else:
                text = decode_html(outcome.body, outcome.charset)
                data = dict(extract_fields(doc, text, self._job.fields))
                if self._follows(task.depth):
                    scope = self._filter(outcome.final_url)
                    links = [u for u in extract_links(doc, outcome.final_url) if scope.allowed(u)]
        return PageResult(
            url=task.url,
            fp=task.fp,
            final_url=outcome.final_url,
            status=outcome.status,
            fetched_at=started,
            depth=task.depth,
            content_type=outcome.content_type,
            data=data,
            checksum=content_checksum(outcome.body),
            body=outcome.body[: self._body_cap] if self._body_cap else None,
            error=error,
            redirects=outcome.redirects,
            links=links,
            link_fps=[fingerprint(u) for u in links],
        )

    def _filter(self, page_url: str) -> LinkFilter:
        """Scope is judged from the page's own domain (it may have redirected away)."""
        domain = domain_of(page_url)
        found = self._filters.get(domain)
        if found is None:
            found = self._filters[domain] = LinkFilter(self._job.links, domain)
        return found

    def _follows(self, depth: int) -> bool:
        job = self._job
        return job.links.follow and (job.max_depth is None or depth < job.max_depth)


def _error(task: PageTask, started: float, error: str) -> PageResult:
    return PageResult(
        url=task.url,
        fp=task.fp,
        final_url=task.url,
        status=0,
        fetched_at=started,
        depth=task.depth,
        error=error[:1000],
    )
