"""Proxy providers: URLs polled for short-lived proxies, and how their answers read.

A provider is polled every `every` seconds and at once (but not within
`min_refill` of the last poll) when fewer than `min_usable` of its proxies
are left.
Whatever it answers is checked entry by entry: an address that is not
host:port or a proxy URL of a known scheme is skipped and counted, never
used. A provider that is down, slow or answering garbage leaves the pool as
it is; it is logged once per interval (not per poll) and counted.

The provider's own request goes out directly, not through a proxy, and is
not subject to the crawl's address policy: it is the operator's service,
often on a private network.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import time
import zoneinfo
from collections import Counter
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import aiohttp
import jmespath

from nadird.common.logs import get_logger
from nadird.common.waits import wait_set
from nadird.config.proxies import ProviderConfig, ProviderJson, check_proxy_url
from nadird.config.secrets import read_secret
from nadird.worker.fetch.proxies import Offer, ProxyPool, redacted

log = get_logger()
MAX_ANSWER = 1024 * 1024  # bytes read of a provider's answer
WallClock = Callable[[], float]


class ProviderAnswerError(ValueError):
    """The provider's answer as a whole cannot be read (not its entries)."""


def parse_answer(
    body: bytes, config: ProviderConfig, wall_now: float, mono_now: float, auth: str = ""
) -> tuple[list[Offer], int]:
    """The proxies in a provider's answer, and how many entries were skipped."""
    text = body.decode("utf-8", "replace")
    if config.format == "lines":
        entries: list[tuple[Any, Any]] = [
            (line.strip(), None) for line in text.splitlines() if line.strip()
        ]
    else:
        entries = _json_entries(text, config.json, wall_now)
    offers: list[Offer] = []
    skipped = 0
    default_end = mono_now + config.lifetime_s if config.lifetime_s else None
    for address, end in entries:
        url = _proxy_url(address, config.scheme, auth)
        if url is None:
            skipped += 1
            continue
        expires = default_end if end is None else mono_now + (end - wall_now)
        if expires is not None and expires <= mono_now:
            skipped += 1  # handed out already dead
            continue
        offers.append(Offer(url, expires))
    return offers, skipped


def _json_entries(text: str, spec: ProviderJson, wall_now: float) -> list[tuple[Any, Any]]:
    try:
        data = json.loads(text)
    except ValueError:
        raise ProviderAnswerError("not JSON") from None
    items = jmespath.search(spec.items, data)
    if not isinstance(items, list):
        raise ProviderAnswerError(f"items ({spec.items}) is not a list")
    zone = zoneinfo.ZoneInfo(spec.timezone)
    entries: list[tuple[Any, Any]] = []
    for item in items:
        address = item if isinstance(item, str) else jmespath.search(spec.address, item)
        end = None
        if spec.expires is not None and not isinstance(item, str):
            end = _epoch(jmespath.search(spec.expires, item), zone)
        elif spec.ttl is not None and not isinstance(item, str):
            ttl = jmespath.search(spec.ttl, item)
            end = wall_now + float(ttl) if _is_number(ttl) else None
        entries.append((address, end))
    return entries


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _epoch(value: Any, zone: zoneinfo.ZoneInfo) -> float | None:
    """Epoch seconds (or milliseconds) or a date string; None if unreadable."""
    if _is_number(value):
        number = float(value)
        return number / 1000 if number > 1e11 else number
    if not isinstance(value, str):
        return None
    try:
        when = dt.datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=zone)
    return when.timestamp()


def _proxy_url(address: Any, scheme: str, auth: str) -> str | None:
    if not isinstance(address, str) or not address.strip() or len(address) > 300:
        return None
    address = address.strip()
    url = address if "://" in address else f"{scheme}://{address}"
    try:
        check_proxy_url(url)
    except ValueError:
        return None
    if auth and "@" not in url:
        user, _, password = auth.partition(":")
        head, rest = url.split("://", 1)
        url = f"{head}://{quote(user, safe='')}:{quote(password, safe='')}@{rest}"
    return url


class ProviderFeed:
    """Polls one provider and merges its proxies into the pool."""

    def __init__(
        self,
        config: ProviderConfig,
        pool: ProxyPool,
        index: int,
        source: str = "(config)",
        wall: WallClock = time.time,
    ) -> None:
        self.config = config
        self.pool = pool
        self.name = f"provider-{index}"
        self.polls = 0
        self.errors: Counter[str] = Counter()  # by reason
        self.skipped = 0  # entries that were not a usable proxy
        self._wall = wall
        key = f"fetch.proxies.providers[{index}]"
        self._secret = read_secret(source, f"{key}.secret", config.secret_file, config.secret_env)
        self._auth = read_secret(source, f"{key}.auth", config.auth_file, config.auth_env)
        self._wake = asyncio.Event()
        self._last_poll = -1e18
        self._logged_at = -1e18  # the last failure logged

    @property
    def label(self) -> str:
        """The provider's URL without its secret, for logs and metrics."""
        return redacted(self.config.url.replace("{secret}", "***"))

    def low(self) -> bool:
        return self.pool.usable(self.name) < self.config.min_usable

    def wake(self) -> None:
        """Ask for a poll now (the pool is running low)."""
        self._wake.set()

    async def poll_once(self, session: aiohttp.ClientSession) -> int:
        """One poll: proxies added (0 when it failed: counted and maybe logged)."""
        self.polls += 1
        self._last_poll = time.monotonic()
        url = self.config.url.replace("{secret}", self._secret or "")
        try:
            async with asyncio.timeout(self.config.timeout_s):
                async with session.get(url, allow_redirects=False) as resp:
                    if resp.status != 200:
                        raise ProviderAnswerError(f"HTTP {resp.status}")
                    body = await resp.content.read(MAX_ANSWER)
            offers, skipped = parse_answer(
                body, self.config, self._wall(), time.monotonic(), self._auth or ""
            )
        except (TimeoutError, aiohttp.ClientError, ProviderAnswerError, OSError) as exc:
            reason = _reason(exc)
            self.errors[reason] += 1
            self._log_failure(reason)
            return 0
        self.skipped += skipped
        if skipped:
            self._log_failure(f"{skipped} entries skipped (not host:port or a proxy URL)")
        return self.pool.offer(self.name, self.config.group, offers, self.config.max_proxies)

    def _log_failure(self, reason: str) -> None:
        now = time.monotonic()
        if now - self._logged_at < self.config.every_s:
            return
        self._logged_at = now
        log.warning("proxy_provider_failed", provider=self.label, reason=reason)

    async def run(self, session: aiohttp.ClientSession, polled: bool = False) -> None:
        """Poll for ever: every `every` seconds, sooner when woken (but never
        twice within `min_refill`)."""
        while True:
            if not polled:
                await self.poll_once(session)
            polled = False
            await wait_set(self._wake, self.config.every_s)
            self._wake.clear()
            wait = self.config.min_refill_s - (time.monotonic() - self._last_poll)
            if wait > 0:
                await asyncio.sleep(wait)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, ProviderAnswerError):
        return str(exc)[:100]
    return type(exc).__name__


class ProviderFeeds:
    """Every provider of a worker, with one plain session for their requests."""

    def __init__(
        self, configs: list[ProviderConfig], pool: ProxyPool, source: str = "(config)"
    ) -> None:
        self.feeds = [ProviderFeed(c, pool, i, source) for i, c in enumerate(configs)]
        if self.feeds:
            pool.on_drop = self.running_low
        self._session: aiohttp.ClientSession | None = None
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self, first_poll_timeout: float = 10.0) -> None:
        """Start polling; waits (bounded) for the first answers so the first
        bags need not fail for want of a proxy."""
        if not self.feeds:
            return
        self._session = aiohttp.ClientSession(trust_env=False)
        session = self._session
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                asyncio.gather(*(f.poll_once(session) for f in self.feeds)), first_poll_timeout
            )
        for feed in self.feeds:
            self._tasks.append(asyncio.create_task(feed.run(session, polled=True)))

    def describe(self) -> list[dict[str, Any]]:
        return [
            {
                "provider": f.label,
                "group": f.config.group,
                "polls": f.polls,
                "errors": dict(sorted(f.errors.items())),
                "skipped": f.skipped,
                "usable": f.pool.usable(f.name),
            }
            for f in self.feeds
        ]

    def running_low(self) -> None:
        """A fetch found no usable proxy, or one was dropped: refill the low ones."""
        for feed in self.feeds:
            if feed.low():
                feed.wake()

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        if self._session is not None:
            await self._session.close()
            self._session = None
