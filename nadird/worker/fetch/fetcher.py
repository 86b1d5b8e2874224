"""HTTP fetching: one shared aiohttp session, bounded bodies, checked redirects.

Every failure becomes a FetchError with an ErrorKind (dns, connect, timeout,
blocked_address, too_many_redirects, redirect_loop, too_large,
content_encoding, proxy, http_error, invalid_url) so the result can be
counted by kind; nothing here raises anything else for a bad site.

Redirects are followed here, hop by hop, rather than by aiohttp: each hop is
checked against the address policy (aiohttp skips the resolver, and so the
policy, for IP-literal URLs), may be checked against robots.txt by the caller,
and a URL seen twice is a loop, reported at once instead of after max hops
(unless the jar took a new cookie on the way: a site that sets its cookie
and sends the client back to the same URL is no loop). A fetch with a
cookie jar (cookies.py) sends and takes cookies on every hop.
Bodies are read raw and decoded in bounded pieces (responses.py, decoding.py).
"""

from __future__ import annotations

import asyncio
import ipaddress
import itertools
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

import aiohttp
from yarl import URL

from nadird.common.errors import ConfigError, ErrorKind, FetchError
from nadird.common.logs import get_logger
from nadird.config import FetchConfig
from nadird.job.request import RequestSpec
from nadird.protocol.exchange import Exchange
from nadird.worker.fetch.addresses import AddressPolicy
from nadird.worker.fetch.capture import HopRecorder
from nadird.worker.fetch.cookies import DomainJar, cookie_header
from nadird.worker.fetch.decoding import accept_encoding
from nadird.worker.fetch.failures import classify
from nadird.worker.fetch.hops import Hop
from nadird.worker.fetch.proxies import Proxy, ProxyPool
from nadird.worker.fetch.proxy_sources import ProviderFeeds
from nadird.worker.fetch.resolver import PolicyResolver
from nadird.worker.fetch.responses import kept_headers, loop_key, read_limited, redirect_target
from nadird.worker.fetch.send_gate import SendRefused, send_gate_trace
from nadird.worker.fetch.throttle import pacing_trace

log = get_logger()
REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
# How long a fetch waits for a provider to refill an empty pool before it
# fails (kind `proxy`, retried later like any transient failure).
PROXY_WAIT = 5.0

# Called with each redirect target before it is fetched; raises FetchError to refuse it.
HopCheck = Callable[[str], Awaitable[None]]


@dataclass(slots=True)
class FetchOutcome:
    status: int
    final_url: str
    content_type: str | None
    charset: str | None
    body: bytes
    redirects: list[str] = field(default_factory=list)
    # responses.KEPT_HEADERS and fetch.store_headers, by lower-case name.
    headers: dict[str, str] = field(default_factory=dict)
    elapsed: float = 0.0  # seconds from the first byte sent to the last byte read
    truncated: bool = False
    proxy: Proxy | None = None  # the proxy that carried it (a ban signal lowers its score)
    # The cookies the last answer set (a login's session); never stored.
    cookies: dict[str, str] = field(default_factory=dict)
    exchanges: list[Exchange] = field(default_factory=list)  # with `capture`: every hop


class _ProxyFault(Exception):
    """A try failed and the pool counted it against the proxy (see proxies.py)."""

    def __init__(self, error: FetchError) -> None:
        super().__init__(error.message)
        self.error = error


class Fetcher:
    def __init__(self, config: FetchConfig, source: str = "(config)") -> None:
        self.config = config
        self.policy = AddressPolicy(config.allow_private, config.allow_networks)
        self.proxies = ProxyPool(config.proxies)
        self.feeds = ProviderFeeds(config.proxies.providers, self.proxies, source)
        self._resolver: PolicyResolver | None = None
        self._session: aiohttp.ClientSession | None = None
        self._socks: dict[str, aiohttp.ClientSession] = {}
        self._agents = itertools.cycle(config.user_agents) if config.user_agents else None

    async def start(self) -> None:
        cfg = self.config
        self._resolver = PolicyResolver(cfg.resolve, self.policy)
        self._session = self._new_session(self._connector())
        for proxy in self.proxies.proxies:
            if proxy.socks:
                self._socks_session(proxy)  # a missing socks extra fails now, not per page
        await self.feeds.start()

    def _connector(self) -> aiohttp.TCPConnector:
        cfg = self.config
        return aiohttp.TCPConnector(
            limit=cfg.pool_size,
            resolver=self._resolver,
            local_addr=(cfg.source_address, 0) if cfg.source_address else None,
        )

    def _socks_connector(self, url: str) -> aiohttp.BaseConnector:
        try:
            from aiohttp_socks import ProxyConnector
        except ImportError:
            raise ConfigError(
                "fetch.proxies", "urls", "socks proxies need: pip install 'nadird[socks]'"
            ) from None
        # aiohttp-socks puts its own no-op resolver in the connector, so the
        # policy resolver never sees these connections: the proxy resolves
        # (rdns) and _guard checks the target name first, as for HTTP proxies.
        connector: aiohttp.BaseConnector = ProxyConnector.from_url(
            url, rdns=True, limit=self.config.pool_size
        )
        return connector

    def _new_session(self, connector: aiohttp.BaseConnector) -> aiohttp.ClientSession:
        cfg = self.config
        timeout = aiohttp.ClientTimeout(
            total=cfg.total_timeout, sock_connect=cfg.connect_timeout, sock_read=cfg.read_timeout
        )
        return aiohttp.ClientSession(
            connector=connector,
            timeout=timeout,
            headers={"User-Agent": cfg.user_agent, "Accept-Encoding": accept_encoding()},
            trust_env=False,
            # No jar: only a request's own cookies go (a shared jar would mix
            # jobs' and accounts' login sessions: worker/fetch/sessions.py).
            cookie_jar=aiohttp.DummyCookieJar(),
            auto_decompress=False,  # decoded here, with a bound: see decoding.py
            # The lane's lease is checked last (send_gate.py); the pace
            # counts from when a request left.
            trace_configs=[send_gate_trace(), pacing_trace()],
        )

    def _socks_session(self, proxy: Proxy) -> aiohttp.ClientSession:
        session = self._socks.get(proxy.url)
        if session is None:
            if len(self._socks) > 2 * len(self.proxies.proxies) + 8:
                self._close_unused_socks()
            session = self._new_session(self._socks_connector(proxy.url))
            self._socks[proxy.url] = session
        return session

    def _close_unused_socks(self) -> None:
        """Provider proxies come and go: close the sessions of dropped ones."""
        live = {p.url for p in self.proxies.proxies}
        for url in [u for u in self._socks if u not in live]:
            asyncio.get_running_loop().create_task(self._socks.pop(url).close())

    async def close(self) -> None:
        await self.feeds.close()
        for session in [self._session, *self._socks.values()]:
            if session is not None:
                await session.close()
        self._session = None
        self._socks.clear()

    async def fetch(
        self,
        url: str,
        *,
        max_redirects: int | None = None,
        max_bytes: int | None = None,
        truncate: bool = False,
        use_proxy: bool = True,
        hop_check: HopCheck | None = None,
        conditional: Mapping[str, str] | None = None,
        proxy_group: str | None = None,
        sticky: str | None = None,
        request: RequestSpec | None = None,
        jar: DomainJar | None = None,
        capture: int = 0,
    ) -> FetchOutcome:
        """GET url, or send `request` (its method, headers, cookies, body).
        `max_bytes` caps the decoded body (default max_decoded_bytes); with
        `truncate` a longer body is cut there instead of failing.
        `conditional` are request headers (If-None-Match...) for the URL
        itself, not for the redirect targets: validators belong to one URL.
        `proxy_group` limits the proxies to one group; `sticky` keeps one
        proxy for every fetch with the same key (a bag) while it works.
        `jar`: the cookies sent and kept (None: only the request's own).
        `capture` > 0 keeps every hop's exchange, bodies cut there (capture.py)."""
        assert self._session is not None, "Fetcher.start() not called"

        def attempt(proxy: Proxy | None) -> Awaitable[FetchOutcome]:
            hop = Hop.first(request, conditional)
            return self._follow(
                url, proxy, max_redirects, max_bytes, truncate, hop_check, hop, jar, capture
            )

        if not (use_proxy and self.proxies.configured):
            return await self._fetch_via(url, None, attempt)
        proxy = await self._proxy_for(proxy_group, sticky)
        tried: list[Proxy] = []
        while True:
            try:
                return await self._fetch_via(url, proxy, attempt)
            except _ProxyFault as fault:
                # The proxy's failure, not the site's: another proxy, at once.
                tried.append(proxy)
                again = None
                if len(tried) < self.proxies.attempts:
                    again = self.proxies.pick(proxy_group, sticky, avoid=tried)
                if again is None:
                    raise fault.error from None
                log.info(
                    "proxy_retry", url=url[:200], failed=proxy.label, error=fault.error.message
                )
                proxy = again

    async def _fetch_via(
        self,
        url: str,
        proxy: Proxy | None,
        attempt: Callable[[Proxy | None], Awaitable[FetchOutcome]],
    ) -> FetchOutcome:
        """One try, through `proxy` (None: direct), scored in the pool;
        _ProxyFault when the pool counts the failure against the proxy."""
        started = time.monotonic()
        site = URL(url).host or ""
        try:
            async with asyncio.timeout(self.config.total_timeout):
                outcome = await attempt(proxy)
        except SendRefused:
            raise  # nothing was sent: neither the site's failure nor the proxy's
        except Exception as exc:
            error = exc if isinstance(exc, FetchError) else classify(exc)
            if proxy is not None and self.proxies.failed(proxy, error.kind, site):
                raise _ProxyFault(error) from None
            if error is exc:
                raise
            raise error from None
        outcome.elapsed = time.monotonic() - started
        if proxy is not None:
            self.proxies.succeeded(proxy, outcome.elapsed, site)
            outcome.proxy = proxy
        return outcome

    async def _proxy_for(self, group: str | None, sticky: str | None) -> Proxy:
        """A proxy of the pool, waiting a little for providers to refill it;
        never None: without one the fetch fails instead of going direct."""
        deadline = time.monotonic() + (PROXY_WAIT if self.feeds.feeds else 0.0)
        while True:
            proxy = self.proxies.pick(group, sticky)
            if proxy is not None:
                return proxy
            self.feeds.running_low()
            if time.monotonic() >= deadline:
                which = f" of group {group!r}" if group else ""
                raise FetchError(ErrorKind.PROXY, f"no usable proxy{which} in the pool")
            await asyncio.sleep(0.1)

    async def _follow(
        self,
        url: str,
        proxy: Proxy | None,
        max_redirects: int | None,
        max_bytes: int | None,
        truncate: bool,
        hop_check: HopCheck | None,
        hop: Hop,
        jar: DomainJar | None = None,
        capture: int = 0,
    ) -> FetchOutcome:
        limit = self.config.max_redirects if max_redirects is None else max_redirects
        # encoded=True: the URL is already canonical; re-quoting could change it.
        current = URL(url, encoded=True)
        seen = {loop_key(str(current))}
        redirects: list[str] = []
        exchanges: list[Exchange] = []
        while True:
            await self._guard(current, proxy)
            async with self._request(hop, current, proxy, jar) as resp:
                status = resp.status
                kept = HopRecorder(resp, hop.body, capture, proxy is None) if capture else None
                if jar is not None and jar.store(resp.headers.getall("Set-Cookie", []), current):
                    seen = set()  # the same URL again is another request now
                location = resp.headers.get("Location") if status in REDIRECT_CODES else None
                if location is None or limit == 0:
                    body, truncated = b"", False
                    if hop.method != "HEAD":  # its Content-Length is the GET's
                        body, truncated = await read_limited(
                            self.config, resp, max_bytes, truncate, kept
                        )
                    outcome = self._outcome(resp, body, truncated, redirects)
                    outcome.exchanges = [*exchanges, kept.exchange()] if kept else []
                    return outcome
                if kept is not None:
                    exchanges.append(await kept.read_rest(resp))
            target = redirect_target(current, location)
            redirects.append(str(current))
            if len(redirects) > limit:
                raise FetchError(
                    ErrorKind.TOO_MANY_REDIRECTS, f"more than {limit} from {url[:200]}"
                )
            key = loop_key(str(target))
            if key in seen:
                raise FetchError(ErrorKind.REDIRECT_LOOP, f"{str(target)[:200]} seen twice")
            seen.add(key)
            if hop_check is not None:
                await hop_check(key)
            hop = hop.next(status, current.host != target.host)
            current = target

    def _outcome(
        self, resp: aiohttp.ClientResponse, body: bytes, truncated: bool, redirects: list[str]
    ) -> FetchOutcome:
        return FetchOutcome(
            status=resp.status,
            final_url=str(resp.url),
            content_type=resp.content_type if "Content-Type" in resp.headers else None,
            charset=resp.charset,
            body=body,
            redirects=redirects,
            headers=kept_headers(resp, self.config.store_headers),
            truncated=truncated,
            cookies={name: morsel.value for name, morsel in resp.cookies.items()},
        )

    def _request(
        self, hop: Hop, url: URL, proxy: Proxy | None, jar: DomainJar | None
    ) -> aiohttp.client._RequestContextManager:
        assert self._session is not None
        session = self._session
        kwargs: dict[str, object] = {}
        if proxy is not None:
            if proxy.socks:
                session = self._socks_session(proxy)
            else:
                kwargs["proxy"] = proxy.url
        headers = dict(hop.headers)
        if self._agents is not None:
            headers["User-Agent"] = next(self._agents)
        if jar is not None and (sent := cookie_header(jar.cookies_for(url), hop.cookie())):
            headers = {k: v for k, v in headers.items() if k.lower() != "cookie"}
            headers["Cookie"] = sent
        if headers:
            kwargs["headers"] = headers
        if hop.body:
            kwargs["data"] = hop.body
        return session.request(hop.method, url, allow_redirects=False, **kwargs)  # type: ignore[arg-type]

    async def _guard(self, url: URL, proxy: Proxy | None) -> None:
        """The address policy for what the resolver does not see."""
        host = url.host or ""
        if proxy is not None:
            # A proxy resolves and connects by itself; check the name here.
            assert self._resolver is not None
            await self._resolver.check_host(host)
            return
        try:
            ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            return  # a name: the policy resolver checks what it resolves to
        if not self.policy.permits(host.strip("[]")):
            raise FetchError(ErrorKind.BLOCKED_ADDRESS, f"{host} is a refused address")
