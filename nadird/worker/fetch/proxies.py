"""The worker's proxy pool: fixed and provider proxies, scored by what they do.

Each proxy has a score (see ScoreConfig): a success sets it to the maximum,
a failure that is the proxy's lowers it, and one at 0 is dropped (provider
proxies) or rests and comes back (fixed ones). A proxy failing
`max_failures` times in a row rests for `cooldown` seconds whatever its
score. Provider proxies past their lifetime are dropped before use.

Whose failure is it? An error of the proxy itself (refused CONNECT, 407,
the proxy unreachable) is the proxy's. A timeout or a broken connection to
the site may be either's: it counts against the proxy until the same site
has failed through `site_blame_after` different proxies in a row, and from
then on (until the site answers again) it is the site's. HTTP answers,
404s and 500s included, are the site's: the proxy carried them.

A request whose failure was the proxy's is tried again at once through
another proxy (fetcher.py), up to `attempts` different ones: one dead proxy
in the pool costs no page.

A worker told to use proxies never falls back to connecting directly: when
every fixed proxy rests, the one that comes back first is used; when the
pool has nothing usable, `pick` returns None and the fetch fails (kind
`proxy`, retried by the master like any transient failure).
"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from nadird.common.errors import ErrorKind
from nadird.config.proxies import DEFAULT_GROUP, ProxyConfig
from nadird.job.spec import PROXY_CAPABILITY

FIXED = "fixed"
# A provider proxy this close to its end is not handed out any more.
EXPIRY_MARGIN = 1.0
MAX_STICKY = 10_000  # bag -> proxy entries kept (bags end and release theirs)
MAX_SITES = 10_000  # sites whose failures are tracked for blame
LATENCY_WEIGHT = 0.2  # of the newest sample in the moving average
# Failures that may be the site's as much as the proxy's.
AMBIGUOUS = frozenset({ErrorKind.TIMEOUT, ErrorKind.CONNECT, ErrorKind.DNS, ErrorKind.HTTP_ERROR})

Clock = Callable[[], float]


def redacted(url: str) -> str:
    """The proxy URL without its user and password: what logs and metrics show."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def proxy_capabilities(config: ProxyConfig) -> list[str]:
    """ "proxy:<group>" for each group this worker has proxies of (or a provider
    for): jobs with a proxy_group need it, so their bags come only here."""
    return [f"{PROXY_CAPABILITY}{group}" for group in config.group_names()]


@dataclass
class Proxy:
    url: str
    group: str = DEFAULT_GROUP
    source: str = FIXED
    score: int = 10
    failures: int = 0  # the proxy's failures in a row
    resting_until: float = 0.0
    expires: float | None = None  # monotonic; None: no stated lifetime
    used: int = 0
    added: float = 0.0
    errors: Counter[str] = field(default_factory=Counter)
    latency: float | None = None  # seconds, moving average of answered requests
    # Score and failures before the last success: a ban signal found in that
    # answer afterwards undoes the success (see ProxyPool.banned).
    prior: tuple[int, int] = (0, 0)

    @property
    def socks(self) -> bool:
        return self.url.lower().startswith("socks")

    @property
    def label(self) -> str:
        return redacted(self.url)

    def usable(self, now: float) -> bool:
        return self.resting_until <= now and not self.expired(now)

    def expired(self, now: float) -> bool:
        return self.expires is not None and self.expires - EXPIRY_MARGIN <= now


@dataclass(frozen=True)
class Offer:
    """A proxy a provider handed out, with its end when the provider said."""

    url: str
    expires: float | None = None  # monotonic


class ProxyPool:
    def __init__(self, config: ProxyConfig, clock: Clock = time.monotonic) -> None:
        self._config = config
        self._clock = clock
        score = config.score.initial
        fixed = [(url, DEFAULT_GROUP) for url in config.urls]
        fixed += [(url, g) for g, urls in config.groups.items() for url in urls]
        self.proxies = [Proxy(url, group, score=score) for url, group in fixed]
        self.dropped: Counter[str] = Counter()  # by reason
        self._next = 0
        self._sticky: OrderedDict[str, Proxy] = OrderedDict()
        self._next_expiry = float("inf")  # the soonest end of life in the pool
        # Called after a proxy was dropped (the providers refill a low pool).
        self.on_drop: Callable[[], None] = lambda: None
        self._site_failed: OrderedDict[str, set[str]] = OrderedDict()

    def __bool__(self) -> bool:
        return bool(self.proxies)

    @property
    def configured(self) -> bool:
        """Told to use proxies (even while the pool is empty)."""
        return self._config.configured

    @property
    def attempts(self) -> int:
        """Different proxies one request tries while the failures are theirs."""
        return self._config.attempts

    # ------------------------------------------------------------ picking
    def pick(
        self,
        group: str | None = None,
        sticky: str | None = None,
        avoid: Collection[Proxy] = (),
    ) -> Proxy | None:
        """The next usable proxy (of `group`, when given), in turn; with
        `sticky` the same one as last time for that key while it stays usable.
        Never one in `avoid` (those a request already failed through: the
        sticky key moves to the new one)."""
        now = self._clock()
        if now >= self._next_expiry - EXPIRY_MARGIN:
            self._drop_expired(now)
        if sticky is not None:
            kept = self._sticky.get(sticky)
            if kept is not None and kept not in avoid and self._fits(kept, now, group):
                kept.used += 1
                return kept
        proxy = self._next_usable(now, group, avoid)
        if proxy is None:
            return None
        proxy.used += 1
        if sticky is not None:
            self._sticky[sticky] = proxy
            self._sticky.move_to_end(sticky)
            while len(self._sticky) > MAX_STICKY:
                self._sticky.popitem(last=False)
        return proxy

    def _fits(self, proxy: Proxy, now: float, group: str | None) -> bool:
        return proxy in self.proxies and proxy.usable(now) and group in (None, proxy.group)

    def _next_usable(self, now: float, group: str | None, avoid: Collection[Proxy]) -> Proxy | None:
        count = len(self.proxies)
        for offset in range(count):
            proxy = self.proxies[(self._next + offset) % count]
            if group in (None, proxy.group) and proxy.usable(now) and proxy not in avoid:
                self._next = (self._next + offset + 1) % count
                return proxy
        # Every fixed proxy of the group rests: the first to come back is used
        # (never a direct connection). Provider proxies are replaced instead.
        resting = [
            p
            for p in self.proxies
            if p.source == FIXED and group in (None, p.group) and p not in avoid
        ]
        return min(resting, key=lambda p: p.resting_until) if resting else None

    def release(self, sticky: str) -> None:
        """A bag ended: its proxy is free to rotate."""
        self._sticky.pop(sticky, None)

    def usable(self, source: str | None = None, group: str | None = None) -> int:
        now = self._clock()
        return sum(
            1
            for p in self.proxies
            if p.usable(now) and source in (None, p.source) and group in (None, p.group)
        )

    # ----------------------------------------------------------- outcomes
    def succeeded(self, proxy: Proxy, latency: float | None = None, site: str = "") -> None:
        proxy.prior = (proxy.score, proxy.failures)
        proxy.failures = 0
        proxy.score = self._config.score.max
        if latency is not None:
            old = proxy.latency
            proxy.latency = latency if old is None else old + LATENCY_WEIGHT * (latency - old)
        if site:
            self._site_failed.pop(site, None)

    def failed(self, proxy: Proxy, kind: ErrorKind = ErrorKind.PROXY, site: str = "") -> bool:
        """Record a failed request; True when it was counted against the proxy."""
        proxy.errors[kind.value] += 1
        if kind in AMBIGUOUS and site and self._site_is_failing(site, proxy):
            return False
        if kind is not ErrorKind.PROXY and kind not in AMBIGUOUS:
            return False  # the proxy carried the answer: not its failure
        self._lower(proxy, self._config.score.failure)
        return True

    def banned(self, proxy: Proxy) -> None:
        """The site refused this proxy (a ban signal the job names) in the
        answer just recorded as a success: that success did not happen."""
        proxy.score, proxy.failures = proxy.prior
        proxy.errors["ban"] += 1
        self._lower(proxy, self._config.score.ban)

    def _site_is_failing(self, site: str, proxy: Proxy) -> bool:
        through = self._site_failed.setdefault(site, set())
        self._site_failed.move_to_end(site)
        through.add(proxy.url)
        while len(self._site_failed) > MAX_SITES:
            self._site_failed.popitem(last=False)
        return len(through) >= self._config.site_blame_after

    def _lower(self, proxy: Proxy, by: int) -> None:
        now = self._clock()
        config = self._config
        proxy.score -= by
        proxy.failures += 1
        if proxy.score <= 0:
            if proxy.source != FIXED:
                self._remove(proxy, "score")
                return
            proxy.score = config.score.initial
            proxy.resting_until = now + config.cooldown
            proxy.failures = 0
        elif proxy.failures >= config.max_failures:
            proxy.resting_until = now + config.cooldown
            proxy.failures = 0

    # ------------------------------------------------------------ sources
    def offer(self, source: str, group: str, offers: Iterable[Offer], keep: int) -> int:
        """Merge what a provider handed out; returns how many were new. A
        proxy already in the pool gets the new end of life; past `keep`
        proxies of this source the oldest are dropped."""
        now = self._clock()
        known = {p.url: p for p in self.proxies}
        added = 0
        for item in offers:
            existing = known.get(item.url)
            if existing is not None:
                if existing.source == source:
                    existing.expires = item.expires
                    self._next_expiry = min(self._next_expiry, item.expires or self._next_expiry)
                continue
            proxy = Proxy(item.url, group, source, self._config.score.initial)
            proxy.expires, proxy.added = item.expires, now
            if item.expires is not None:
                self._next_expiry = min(self._next_expiry, item.expires)
            self.proxies.append(proxy)
            known[item.url] = proxy
            added += 1
        mine = sorted((p for p in self.proxies if p.source == source), key=lambda p: p.added)
        for proxy in mine[: max(0, len(mine) - keep)]:
            self._remove(proxy, "overflow")
        return added

    def _drop_expired(self, now: float) -> None:
        for proxy in [p for p in self.proxies if p.expired(now)]:
            self._remove(proxy, "expired")
        ends = [p.expires for p in self.proxies if p.expires is not None]
        self._next_expiry = min(ends, default=float("inf"))

    def _remove(self, proxy: Proxy, reason: str) -> None:
        if proxy in self.proxies:
            self.proxies.remove(proxy)
            self.dropped[reason] += 1
            self.on_drop()

    def describe(self) -> dict[str, Any]:
        """The pool for /healthz and /metrics: each proxy (credentials
        removed) with its score and counters, and what was dropped."""
        now = self._clock()
        return {
            "usable": self.usable(),
            "total": len(self.proxies),
            "dropped": dict(sorted(self.dropped.items())),
            "proxies": [
                {
                    "proxy": p.label,
                    "group": p.group,
                    "source": p.source,
                    "score": p.score,
                    "usable": p.usable(now),
                    "requests": p.used,
                    "failures": dict(sorted(p.errors.items())),
                    "latency_s": None if p.latency is None else round(p.latency, 4),
                }
                for p in self.proxies
            ],
        }

    def groups(self) -> dict[str, int]:
        """Usable proxies by group (the worker reports it to the master)."""
        now = self._clock()
        counts: Counter[str] = Counter(p.group for p in self.proxies if p.usable(now))
        return dict(sorted(counts.items()))
