"""How a rendered page's own requests (scripts, XHR, styles...) are answered.

The browser fetches nothing itself: each request it makes comes here, and
what is allowed is fetched by the worker's Fetcher, so the same rules hold as
for pages: the address policy checked after DNS on every hop, the names
pinned by fetch.resolve, proxies, the body limits, robots.txt. Why this
rather than letting Chromium connect with `--host-resolver-rules` mapping
the pinned names: Chromium would then do its own DNS for every other name
and would never see the address policy, robots.txt, the pace or the size
limits; one fetcher for everything keeps a single place to get them right.

In order, cheapest first, a request is refused when it is:

1. a top-level navigation away from the page (a script setting location,
   a popup): the crawler follows links, not scripts' whims;
2. not a GET, or not http(s): a crawler must not post forms or beacons;
3. of a blocked resource type (job `render_block`: images, fonts, media by
   default) - they cost bandwidth and never change the DOM's text;
4. third-party (another registrable domain than the bag's) unless the job
   sets `render_third_party`: no lease is held for that domain, so its pace
   could not be kept;
5. disallowed by robots.txt (when the job obeys it);
6. over the page's budget (`fetch.render.max_subrequests` requests,
   `max_page_bytes` decoded bytes).

Scripts and stylesheets fetched before are answered from the worker's cache
(cache.py) after rule 5: no request, only bytes counted. A
first-party request is paced like a page of the domain (it is a request to
the domain: the politeness delay holds between its start and any other),
then fetched with at most the bytes left in the page's budget.
Third-party requests, when allowed, are not paced (no lease, no pacer), only
counted against the page's budget.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from nadird.common.errors import ErrorKind, FetchError, InvalidURL
from nadird.common.logs import get_logger
from nadird.common.urls import canonicalize, domain_of
from nadird.config import RenderConfig
from nadird.job.spec import Job
from nadird.protocol.exchange import Exchange
from nadird.worker.fetch.fetcher import Fetcher, HopCheck
from nadird.worker.render.cache import SubresourceCache
from nadird.worker.render.exchange import Abort, Fulfil, Reply, SubRequest

log = get_logger()

Pace = Callable[[], Awaitable[None]]

# The network error a page sees for a failed fetch, by FetchError kind.
_ABORT_CODES = {
    ErrorKind.TIMEOUT: "timedout",
    ErrorKind.DNS: "namenotresolved",
    ErrorKind.CONNECT: "connectionfailed",
    ErrorKind.BLOCKED_ADDRESS: "addressunreachable",
    ErrorKind.ROBOTS: "blockedbyclient",
}


@dataclass
class PageRequests:
    """The sub-requests of one rendered page: answers them and keeps count."""

    policy: SubrequestPolicy
    fetched: list[str] = field(default_factory=list)
    blocked: Counter[str] = field(default_factory=Counter)
    bytes: int = 0
    # The exchanges fetched for the browser, when the bag archives (Bag.archive).
    exchanges: list[Exchange] = field(default_factory=list)

    async def __call__(self, request: SubRequest) -> Reply:
        reply = await self._answer(request)
        if isinstance(reply, Abort):
            self.blocked[reply.reason] += 1
        return reply

    async def _answer(self, request: SubRequest) -> Reply:
        policy = self.policy
        refused = policy.refusal(request)
        if refused is not None:
            return refused
        url = request.url.partition("#")[0]
        canonical = canonicalize(url)  # refusal() made sure it is valid
        try:
            if policy.hop_check is not None:
                await policy.hop_check(canonical)
        except FetchError as exc:
            return Abort(exc.kind, _ABORT_CODES.get(exc.kind, "failed"))
        cfg = policy.config
        left = cfg.max_page_bytes - self.bytes
        cache = policy.cache
        cached = cache.get(url, request.resource_type) if cache is not None else None
        if cached is not None and len(cached.body) <= left:
            self.bytes += len(cached.body)
            return cached
        if len(self.fetched) >= cfg.max_subrequests:
            return Abort("budget_requests")
        if left <= 0:
            return Abort("budget_bytes")
        try:
            if policy.pace is not None and domain_of(canonical) == policy.domain:
                await policy.pace()
            self.fetched.append(url)
            outcome = await policy.fetcher.fetch(
                url,
                max_bytes=left,
                use_proxy=policy.job.proxies,
                hop_check=policy.hop_check,
                capture=policy.capture,
            )
        except FetchError as exc:
            return Abort(exc.kind, _ABORT_CODES.get(exc.kind, "failed"))
        self.bytes += len(outcome.body)
        self.exchanges += outcome.exchanges
        content_type = outcome.content_type
        if content_type and outcome.charset:
            content_type = f"{content_type}; charset={outcome.charset}"
        reply = Fulfil(outcome.status, content_type, outcome.body)
        if policy.cache is not None:
            policy.cache.put(url, request.resource_type, reply)
        return reply


class SubrequestPolicy:
    """One per bag: the rules for sub-requests of pages of the bag's domain."""

    def __init__(
        self,
        fetcher: Fetcher,
        job: Job,
        config: RenderConfig,
        domain: str,
        pace: Pace | None = None,
        hop_check: HopCheck | None = None,
        cache: SubresourceCache | None = None,
        capture: int = 0,  # Bag.archive: keep the exchanges, bodies cut there
    ) -> None:
        self.fetcher = fetcher
        self.capture = capture
        self.job = job
        self.config = config
        self.domain = domain
        self.pace = pace
        self.hop_check = hop_check
        self.cache = cache
        self._blocked_types = frozenset(job.render_block)

    def page(self) -> PageRequests:
        """Counters and budget for one rendered page."""
        return PageRequests(self)

    def refusal(self, request: SubRequest) -> Abort | None:
        """The static rules (1-4 above): an Abort, or None if it may be fetched."""
        if request.navigation:
            return Abort("navigation", "aborted")
        if request.method != "GET":
            return Abort("method")
        if not request.url.lower().startswith(("http://", "https://")):
            return Abort("scheme")
        if request.resource_type in self._blocked_types:
            return Abort(f"type_{request.resource_type}")
        try:
            canonical = canonicalize(request.url.partition("#")[0])
        except InvalidURL:
            return Abort("invalid_url", "failed")
        if not self.job.render_third_party and domain_of(canonical) != self.domain:
            return Abort("third_party")
        return None
