"""robots.txt per RFC 9309, fetched once per host and shared by every bag.

What a fetch of /robots.txt means (RFC 9309 section 2.3.1):

* 2xx: the rules, parsed by Protego (wildcards, '$', longest match, allow
  wins a tie, user-agent groups). Past max_bytes the file is cut, not refused.
* 4xx ("unavailable"): everything is allowed.
* 5xx, and 429 (an overloaded server, as Google treats it): "unreachable",
  everything is disallowed for error_ttl; the bag is handed back to rest and
  robots.txt is fetched again after that.
* Redirects are followed up to max_redirects hops (RFC: at least five); more,
  or a loop, counts as unavailable.
* The host cannot be reached at all (DNS, connect, timeout, refused address):
  nothing can be fetched there either. The URLs are recorded with that error
  rather than retried on this worker: a dead host must not keep a crawl busy.
  The error is the site's as it is (a refused connection says so); it names
  robots.txt only when it is about that fetch: a timeout or a broken answer
  of robots.txt, or a failure after robots.txt redirected elsewhere.
* Every proxy tried failed (kind `proxy`): that says nothing of the site, so
  it is not kept; the pages fail with it and the master tries them later.

Entries live `ttl` seconds (error_ttl for failures) in a bounded LRU. Two
lanes asking for the same host at once share one fetch.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from protego import Protego

from nadird.common.errors import ErrorKind, FetchError
from nadird.common.logs import get_logger
from nadird.common.robots_delay import robots_delay
from nadird.common.urls import origin_of
from nadird.config import RobotsConfig
from nadird.protocol.messages import RobotsNote
from nadird.worker.fetch.fetcher import Fetcher
from nadird.worker.fetch.send_gate import SendRefused

log = get_logger()

Verdict = Literal["rules", "allow_all", "unreachable", "failed"]
# Failures of reaching the host at all: the page's own fetch would fail the
# same way, so its error is the host's, not labelled as robots.txt's.
_HOST_FAILURES = frozenset(
    {ErrorKind.DNS, ErrorKind.CONNECT, ErrorKind.BLOCKED_ADDRESS, ErrorKind.PROXY}
)
# A fetch error that says the robots file is unavailable, not that the host is down.
_UNAVAILABLE = frozenset(
    {
        ErrorKind.TOO_MANY_REDIRECTS,
        ErrorKind.REDIRECT_LOOP,
        ErrorKind.TOO_LARGE,
        ErrorKind.CONTENT_ENCODING,
    }
)

Pace = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class RobotsRules:
    verdict: Verdict
    expires: float  # time.monotonic()
    parser: Protego | None = None
    failure: FetchError | None = None  # for "failed": why robots.txt could not be read
    text: str = ""  # the file, for "rules": what is shared with other workers
    fetched: float = 0.0  # time.monotonic() of the fetch

    @property
    def error(self) -> str | None:
        """The failure as the page records it, "kind: detail"."""
        return None if self.failure is None else self.failure.message

    def allows(self, url: str, token: str) -> bool:
        if self.verdict == "rules" and self.parser is not None:
            return bool(self.parser.can_fetch(url, token))
        return self.verdict == "allow_all"

    def delay(self, token: str) -> float | None:
        """Crawl-delay, or the interval a Request-rate line asks for."""
        return None if self.parser is None else robots_delay(self.parser, token)

    def sitemaps(self) -> list[str]:
        return list(self.parser.sitemaps) if self.parser is not None else []


def page_error(exc: FetchError, hops: list[str]) -> FetchError:
    """What the pages of a host whose robots.txt could not be read record:
    the host's own failure as it is, or robots.txt's labelled as such. A
    copy, without the traceback: the entry stays cached for error_ttl."""
    if hops:
        return FetchError(exc.kind, f"{exc.detail} (robots.txt, redirected to {hops[-1][:200]})")
    if exc.kind in _HOST_FAILURES:
        return FetchError(exc.kind, exc.detail)
    return FetchError(exc.kind, f"{exc.detail} (robots.txt)")


class RobotsCache:
    def __init__(self, fetcher: Fetcher, config: RobotsConfig) -> None:
        self._fetcher = fetcher
        self.config = config
        self._entries: OrderedDict[str, RobotsRules] = OrderedDict()
        self._pending: dict[str, asyncio.Future[RobotsRules]] = {}
        self.fetches = 0
        self.primed = 0

    def shareable(self, origins: Iterable[str]) -> list[RobotsNote]:
        """What this worker fetched for these origins, to pass on via the master."""
        notes = []
        now = time.monotonic()
        for origin in origins:
            entry = self._entries.get(origin)
            if entry is None or not entry.fetched or entry.expires <= now:
                continue  # failures are not shared: the next worker tries itself
            notes.append(
                RobotsNote(origin, entry.verdict == "allow_all", entry.text, now - entry.fetched)
            )
        return notes

    def prime(self, notes: Iterable[RobotsNote]) -> None:
        """Take robots.txt files another worker fetched, unless ours is fresher."""
        now = time.monotonic()
        for note in notes:
            fresh = self.config.ttl - note.age
            if fresh <= 0 or self.cached(note.origin + "/") is not None:
                continue
            fetched = now - note.age
            if note.allow_all:
                entry = RobotsRules("allow_all", now + fresh, fetched=fetched)
            else:
                try:
                    parser = Protego.parse(note.text)
                except Exception:
                    continue  # then this worker fetches it itself
                entry = RobotsRules(
                    "rules", now + fresh, parser=parser, text=note.text, fetched=fetched
                )
            self._entries[note.origin] = entry
            self.primed += 1
        while len(self._entries) > self.config.max_hosts:
            self._entries.popitem(last=False)

    def cached(self, url: str) -> RobotsRules | None:
        entry = self._entries.get(origin_of(url))
        if entry is None or entry.expires <= time.monotonic():
            return None
        return entry

    async def rules(
        self, url: str, pace: Pace | None = None, use_proxy: bool = True
    ) -> RobotsRules:
        """The rules for url's origin; fetched (after `pace()`) if not cached."""
        origin = origin_of(url)
        entry = self._entries.get(origin)
        if entry is not None and entry.expires > time.monotonic():
            self._entries.move_to_end(origin)
            return entry
        pending = self._pending.get(origin)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[RobotsRules] = asyncio.get_running_loop().create_future()
        self._pending[origin] = future
        try:
            if pace is not None:
                await pace()
            entry = await self._fetch(origin, use_proxy)
        except asyncio.CancelledError:
            future.cancel()  # only at shutdown; the lanes waiting on it stop too
            raise
        except SendRefused as exc:
            # Not sent (send_gate.py): nothing learnt, nothing cached; the
            # lanes waiting on it take their URLs back as this one does.
            future.set_exception(exc)
            future.exception()  # retrieved: raised here too
            raise
        except Exception as exc:  # a bug here must not stop the bag
            log.exception("robots_internal_error", origin=origin)
            error = FetchError(ErrorKind.INTERNAL, f"{type(exc).__name__}: {exc}")
            entry = RobotsRules("failed", time.monotonic() + self.config.error_ttl, failure=error)
        finally:
            self._pending.pop(origin, None)
        future.set_result(entry)
        self._entries[origin] = entry
        if len(self._entries) > self.config.max_hosts:
            self._entries.popitem(last=False)
        return entry

    async def _fetch(self, origin: str, use_proxy: bool) -> RobotsRules:
        cfg = self.config
        now = time.monotonic()
        self.fetches += 1
        hops: list[str] = []  # where robots.txt redirected to

        async def follow(url: str) -> None:
            hops.append(url)

        try:
            outcome = await self._fetcher.fetch(
                f"{origin}/robots.txt",
                max_redirects=cfg.max_redirects,
                max_bytes=cfg.max_bytes,
                truncate=True,
                use_proxy=use_proxy,
                hop_check=follow,
            )
        except FetchError as exc:
            if exc.kind in _UNAVAILABLE:
                return RobotsRules("allow_all", now + cfg.ttl)
            log.info("robots_failed", origin=origin, error=str(exc))
            # A proxy's failure is not the site's: not kept, the next page asks again.
            ttl = 0.0 if exc.kind is ErrorKind.PROXY else cfg.error_ttl
            return RobotsRules("failed", now + ttl, failure=page_error(exc, hops))
        status = outcome.status
        if status == 429 or status >= 500:
            log.info("robots_unreachable", origin=origin, status=status)
            return RobotsRules("unreachable", now + cfg.error_ttl)
        if not 200 <= status < 300:
            return RobotsRules("allow_all", now + cfg.ttl, fetched=now)
        try:
            text = outcome.body.decode("utf-8", errors="replace")
            parser = Protego.parse(text)
        except Exception as exc:  # a file Protego cannot read imposes no rule
            log.info("robots_unparsable", origin=origin, error=f"{type(exc).__name__}: {exc}")
            return RobotsRules("allow_all", now + cfg.ttl)
        return RobotsRules("rules", now + cfg.ttl, parser=parser, text=text, fetched=now)
