"""From one URL of a bag to one PageResult: fetch, parse, extract, discover.

A 429 or 503 answer yields no result at all: the URL goes back to the master
with the rest of the bag (see bag.py), so it is fetched again later rather
than stored as a failure.

A page whose <link rel=canonical> names another URL in the job's scope is
not treated as an item of its own: it is recorded (status, canonical) with no
fields, and its only link is the canonical URL, which the master admits like
any other link (the seen set makes sure it is fetched once). So a page
reachable under many URLs is extracted and stored with data once, under its
canonical URL. When the canonical URL is out of scope, or the page is at the
job's max_depth (its link would be dropped), the page is extracted itself.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lxml.cssselect import CSSSelector

from nadird.common.errors import ErrorKind, FetchError
from nadird.common.logs import get_logger
from nadird.config import FetchConfig
from nadird.items.keys import apply_key, compile_key
from nadird.items.processors import Context
from nadird.items.schema import compile_rules
from nadird.job.feeds import feeds_spec
from nadird.job.parser_choice import page_parser
from nadird.job.request import RequestSpec, link_fields
from nadird.job.spec import Job
from nadird.protocol.bodies import body_to_send
from nadird.protocol.messages import PageResult
from nadird.worker.feed_page import is_feed, read_feed_page
from nadird.worker.fetch.cookies import DomainJar
from nadird.worker.fetch.fetcher import Fetcher, FetchOutcome, HopCheck
from nadird.worker.follow.feedlinks import feed_links, without_deep_pages
from nadird.worker.follow.filter import LinkPipeline
from nadird.worker.follow.find import extract_links, resolve_hrefs
from nadird.worker.follow.jsonlinks import json_hrefs, next_page, next_request
from nadird.worker.page_task import (
    MAX_HEADER_CHARS,
    NOT_MODIFIED,
    PageTask,
    error_result,
    not_modified,
)
from nadird.worker.parse.base import Tree
from nadird.worker.parse.directives import Directives, canonical_link, robots_directives
from nadird.worker.parse.item import JsonBody, extract_item, item_simhash, json_body, json_text
from nadird.worker.parse.jsonsources import PageJson
from nadird.worker.parse.page import lxml_tree, parse_page
from nadird.worker.parse.parser import content_checksum, decode_html, parse_html
from nadird.worker.parse.signature import signature

if TYPE_CHECKING:
    from nadird.worker.fetch.login_sessions import BagSessions
    from nadird.worker.render.step import RenderStep

log = get_logger()
__all__ = ["PageProcessor", "PageTask", "Processed", "error_result", "not_modified"]

THROTTLE_CODES = frozenset({429, 503})
# What tells the adaptive delay that the server is struggling: timeouts,
# refused connections and gateway errors. Not a 500: a broken page on a
# healthy site is no reason to slow the whole site down.
_STRAIN_ERRORS = frozenset({ErrorKind.TIMEOUT, ErrorKind.CONNECT})
_STRAIN_STATUSES = frozenset({502, 504})


@dataclass(slots=True)
class Read:
    """What reading a fetched document gave (its parts of the PageResult)."""

    data: dict[str, object] = field(default_factory=dict)
    links: list[str] = field(default_factory=list)
    requests: list[RequestSpec] = field(default_factory=list)  # follow-ups: a next POST
    error: FetchError | None = None
    canonical: str | None = None
    signature: str | None = None
    keep_body: bool | None = None  # None: as the X-Robots-Tag header says


@dataclass(slots=True)
class Processed:
    """A result, or None for a 429/503 (with its Retry-After header, if any)."""

    result: PageResult | None
    status: int = 0
    retry_after: str | None = None
    latency: float | None = None  # None when no response came back
    strained: bool = False  # a timeout, connect failure or 502/504: slow down


class PageProcessor:
    """Knows the job and the domain of one bag; turns its URLs into results."""

    def __init__(
        self,
        fetcher: Fetcher,
        job: Job,
        fetch: FetchConfig,
        links: LinkPipeline,
        hop_check: HopCheck | None = None,
        render: RenderStep | None = None,  # jobs that render (see render/step.py)
        sticky: str | None = None,  # the bag's key when its job keeps one proxy per bag
        sessions: BagSessions | None = None,  # a job with a login: its requests' sessions
        jar: DomainJar | None = None,  # the job's cookies on this domain (fetch/cookies.py)
        capture: int = 0,  # Bag.archive: keep the exchanges, bodies cut there
    ) -> None:
        self._fetcher = fetcher
        self._fetch_page = fetcher.fetch if sessions is None else sessions.fetch
        self._job = job
        self._rules = compile_rules(job.schema)  # checked when the job was built
        self._key = compile_key(job.item_key)
        self._fetch = fetch
        self._html_types = set(fetch.html_types)
        self._reads_json = job.reads_json()
        self._parser = page_parser(job)  # lxml or Lexbor, for all the job's pages
        self._feeds = feeds_spec(job.feeds)
        self._links = links
        self._hop_check = hop_check
        self._render = render
        self._sticky = sticky
        self._jar = jar
        self._capture = capture
        selector = job.proxy_ban.selector
        self._ban_selector = CSSSelector(selector) if selector else None

    async def process(self, task: PageTask) -> Processed:
        started = time.time()
        try:
            outcome = await self._fetch_page(
                task.url,
                use_proxy=self._job.proxies,
                hop_check=self._hop_check,
                conditional=task.conditional(),
                proxy_group=self._job.proxy_group,
                sticky=self._sticky,
                request=self._request(task),
                jar=self._jar,
                capture=self._capture,
            )
        except FetchError as exc:
            result = error_result(task, started, exc)
            return Processed(result, strained=exc.kind in _STRAIN_ERRORS)
        ban = self._banned(outcome)
        if ban is not None:  # retried later, through another proxy
            return Processed(
                error_result(task, started, ban), outcome.status, None, outcome.elapsed
            )
        if outcome.status in THROTTLE_CODES:
            return Processed(
                None, outcome.status, outcome.headers.get("retry-after"), outcome.elapsed
            )
        if outcome.status == NOT_MODIFIED:
            return Processed(
                not_modified(task, outcome, started), outcome.status, None, outcome.elapsed
            )
        try:
            size = len(outcome.body)
            if self._render is None:
                result = self._from_outcome(task, outcome, started, size)
            else:
                result = await self._render.result(
                    outcome,
                    lambda page: self._from_outcome(task, page, started, size),
                    lambda error: error_result(task, started, error),
                )
        except Exception as exc:  # a bad page must never stop the bag
            log.exception("page_failed", url=task.url)
            failed = FetchError(ErrorKind.INTERNAL, f"{type(exc).__name__}: {exc}")
            result = error_result(task, started, failed)
        strained = outcome.status in _STRAIN_STATUSES
        return Processed(result, outcome.status, None, outcome.elapsed, strained)

    def _request(self, task: PageTask) -> RequestSpec | None:
        """The task's request under the job's default headers and cookies;
        None when that is a plain GET (the fetcher's own path)."""
        job = self._job
        if task.request is None and not (job.headers or job.cookies):
            return None
        spec = (task.request or RequestSpec(task.url)).with_defaults(job.headers, job.cookies)
        return None if spec.plain else spec

    def _from_outcome(
        self, task: PageTask, outcome: FetchOutcome, started: float, size: int
    ) -> PageResult:
        read = Read()
        if outcome.status < 400:
            body = self._json_body(outcome)
            if self._feeds is not None and is_feed(outcome.final_url, outcome.body):
                read = self._read_feed(task, outcome)
            elif body is not None:
                read = self._read_json(task, outcome, started, body)
            elif outcome.content_type in self._html_types:
                read = self._read_html(task, outcome, started)
        error, links, keep_body = read.error, read.links, read.keep_body
        if keep_body is None:  # not read as a document: the headers decide
            keep_body = not self._directives(None, outcome).noindex
        # Last: a key that cannot be made marks the item invalid (items/keys.py).
        item_key = apply_key(self._key, task.url, outcome.final_url, read.data)
        cap = self._fetch.store_body_bytes
        kept = outcome.body[:cap] if cap and keep_body else None
        stored, in_exchange = body_to_send(kept, outcome.exchanges)
        return PageResult(
            url=task.url,
            fp=task.fp,
            final_url=outcome.final_url,
            status=outcome.status,
            fetched_at=started,
            depth=task.depth,
            content_type=outcome.content_type,
            data=read.data,
            checksum=content_checksum(outcome.body),
            body=stored,
            body_in_exchange=in_exchange,
            error=None if error is None else error.message,
            error_kind=None if error is None else error.kind,
            redirects=outcome.redirects,
            **link_fields(links, read.requests),
            canonical=read.canonical,
            headers=self._stored_headers(outcome),
            row=task.row,
            # The latency histogram and the page log line: the time of the
            # fetch itself, redirects included, without parsing.
            elapsed=outcome.elapsed,
            size=size,
            signature=read.signature,
            item_key=item_key,
            simhash=item_simhash(self._job, read.data),
            etag=outcome.headers.get("etag", "")[:MAX_HEADER_CHARS],
            last_modified=outcome.headers.get("last-modified", "")[:MAX_HEADER_CHARS],
            **task.asked(),
            exchanges=outcome.exchanges,
        )

    def _read_html(self, task: PageTask, outcome: FetchOutcome, started: float) -> Read:
        text = decode_html(outcome.body, outcome.charset)  # once: parser and regexes
        doc = parse_page(text, outcome.final_url, self._parser)
        if doc is None:
            return Read(error=FetchError(ErrorKind.PARSE, "document could not be parsed"))
        read = Read(canonical=self._canonical(doc, task, outcome))
        directives = self._directives(doc, outcome)
        if read.canonical is not None and self._defers_to(read.canonical, task, outcome):
            read.links, read.keep_body = [read.canonical], False
            return read
        read.keep_body = not directives.noindex
        selected: dict[str, object] = {}
        if read.keep_body:
            ctx = Context(outcome.final_url, started)
            selected, read.data = extract_item(doc, text, self._job, self._rules, ctx)
        if self.follows(task.depth) and not directives.nofollow:
            nofollow = self._fetch.robots.respect_nofollow
            found = extract_links(doc, outcome.final_url, nofollow)
            hrefs, read.requests = self._next_page(selected, task, outcome)
            pages = resolve_hrefs(hrefs, outcome.final_url)
            if self._feeds is not None:  # feeds first; deep archive pages never
                feeds = feed_links(lxml_tree(doc), outcome.final_url)
                found = without_deep_pages([*feeds, *found], self._feeds)
                pages = without_deep_pages(pages, self._feeds)
            read.links = self._links.follow(pages + found, outcome.final_url)
        if self._job.revisits:  # last: it may remove ignored elements
            job = self._job
            signs_fields = bool(job.fields or job.article)  # article: its fields too
            tree = lxml_tree(doc)
            read.signature = signature(signs_fields, read.data, tree, job.signature_ignore)
        return read

    def _read_feed(self, task: PageTask, outcome: FetchOutcome) -> Read:
        assert self._feeds is not None
        max_bytes = self._fetch.sitemaps.max_bytes
        page = read_feed_page(outcome.final_url, outcome.body, self._feeds, self._links, max_bytes)
        follows = self.follows(task.depth)
        return Read(
            data=page.data,
            links=page.links if follows else [],
            error=page.error,
            signature=page.signature if self._job.revisits else None,
        )

    def _read_json(
        self, task: PageTask, outcome: FetchOutcome, started: float, body: JsonBody
    ) -> Read:
        if isinstance(body, FetchError):
            return Read(error=body)
        read = Read()
        directives = self._directives(None, outcome)  # X-Robots-Tag
        selected: dict[str, object] = {}
        if not directives.noindex:
            ctx, page = Context(outcome.final_url, started), PageJson(None, body.value)
            text = json_text(outcome.body)
            selected, read.data = extract_item(None, text, self._job, self._rules, ctx, page)
        if self.follows(task.depth) and not directives.nofollow:
            hrefs, read.requests = self._next_page(selected, task, outcome)
            hrefs += json_hrefs(body.value, self._job.links.jmes)
            read.links = self._links.follow(
                resolve_hrefs(hrefs, outcome.final_url), outcome.final_url
            )
        if self._job.revisits:
            read.signature = signature(bool(self._job.fields), read.data, None, [])
        return read

    def _json_body(self, outcome: FetchOutcome) -> JsonBody | None:
        return json_body(self._reads_json, outcome.content_type, outcome.body)

    def _next_page(
        self, selected: dict[str, object], task: PageTask, outcome: FetchOutcome
    ) -> tuple[list[str], list[RequestSpec]]:
        """The next page of a paginated walk, if the job walks and this page
        has one: an href (first of the page's links), or the next request
        when the page parameter lives in the request's form or JSON body."""
        rule = self._job.paginate
        if rule is None:
            return [], []
        spec = task.request
        if rule.param is not None and spec is not None and spec.fields() is not None:
            after = next_request(rule, selected, spec)
            scope = self._links.scope(outcome.final_url)
            keep = after is not None and self._links.allowed(after.url, scope)
            return [], [after] if after is not None and keep else []
        found = next_page(rule, selected, outcome.final_url)
        return [] if found is None else [found], []

    def _banned(self, outcome: FetchOutcome) -> FetchError | None:
        """A ban signal of the job (a status, or a page matching its selector)
        in an answer that came through a proxy: the proxy's failure."""
        proxy = outcome.proxy
        if proxy is None:
            return None
        ban = self._job.proxy_ban
        if outcome.status in ban.statuses:
            why = f"status {outcome.status}"
        elif self._ban_selector is not None and outcome.content_type in self._html_types:
            doc = parse_html(outcome.body, outcome.final_url, outcome.charset)
            if doc is None or not self._ban_selector(doc):
                return None
            why = "a page matching proxy_ban.selector"
        else:
            return None
        self._fetcher.proxies.banned(proxy)
        if self._sticky is not None:
            self._fetcher.proxies.release(self._sticky)
        return FetchError(ErrorKind.PROXY, f"the site refused proxy {proxy.label} ({why})")

    def _stored_headers(self, outcome: FetchOutcome) -> dict[str, str]:
        kept = outcome.headers
        names = (name.lower() for name in self._fetch.store_headers)
        return {name: kept[name][:MAX_HEADER_CHARS] for name in names if name in kept}

    def _directives(self, doc: Tree | None, outcome: FetchOutcome) -> Directives:
        robots = self._fetch.robots
        if not robots.respect_meta:
            return Directives()
        header = outcome.headers.get("x-robots-tag")
        return robots_directives(doc, header, robots.user_agent)

    def _canonical(self, doc: Tree, task: PageTask, outcome: FetchOutcome) -> str | None:
        found = canonical_link(doc, outcome.final_url)
        if found is None:
            return None
        found = self._links.strip(found)
        return None if found in (task.url, outcome.final_url) else found

    def _defers_to(self, canonical: str, task: PageTask, outcome: FetchOutcome) -> bool:
        if not self.follows(task.depth):
            return False
        return self._links.allowed(canonical, self._links.scope(outcome.final_url))

    def follows(self, depth: int) -> bool:
        job = self._job
        return job.links.follow and (job.max_depth is None or depth < job.max_depth)
