"""HTTP fetching: one shared aiohttp session, bounded bodies, recorded redirects.

Every failure becomes a FetchError with a short `kind` (dns, connect, timeout,
blocked_address, too_many_redirects, too_large, http_error, invalid_url) so the
result can be counted by kind; nothing here raises anything else for a bad
site.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import aiohttp
from yarl import URL

from nadird.config import FetchConfig
from nadird.errors import FetchError
from nadird.worker.addresses import AddressPolicy
from nadird.worker.resolver import AddressBlocked, PolicyResolver

READ_CHUNK = 64 * 1024


@dataclass(slots=True)
class FetchOutcome:
    status: int
    final_url: str
    content_type: str | None
    charset: str | None
    body: bytes
    redirects: list[str] = field(default_factory=list)


class Fetcher:
    def __init__(self, config: FetchConfig) -> None:
        self.config = config
        self._session: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        cfg = self.config
        resolver = PolicyResolver(cfg.resolve, AddressPolicy(cfg.allow_private))
        connector = aiohttp.TCPConnector(
            limit=cfg.pool_size,
            resolver=resolver,
            local_addr=(cfg.source_address, 0) if cfg.source_address else None,
        )
        timeout = aiohttp.ClientTimeout(
            total=cfg.total_timeout, sock_connect=cfg.connect_timeout, sock_read=cfg.read_timeout
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=timeout,
            headers={"User-Agent": cfg.user_agent, "Accept-Encoding": "gzip, deflate"},
            trust_env=False,
        )

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def fetch(self, url: str) -> FetchOutcome:
        assert self._session is not None, "Fetcher.start() not called"
        try:
            # encoded=True: the URL is already canonical; re-quoting could change it.
            async with self._session.get(
                URL(url, encoded=True),
                allow_redirects=self.config.max_redirects > 0,
                max_redirects=max(1, self.config.max_redirects),
            ) as resp:
                body = await self._read_limited(resp)
                return FetchOutcome(
                    status=resp.status,
                    final_url=str(resp.url),
                    content_type=resp.content_type if "Content-Type" in resp.headers else None,
                    charset=resp.charset,
                    body=body,
                    redirects=[str(r.url) for r in resp.history],
                )
        except FetchError:
            raise
        except Exception as exc:
            raise classify(exc) from None

    async def _read_limited(self, resp: aiohttp.ClientResponse) -> bytes:
        limit = self.config.max_body_bytes
        declared = resp.content_length
        if declared is not None and declared > limit:
            raise FetchError("too_large", f"Content-Length {declared} exceeds {limit}")
        chunks: list[bytes] = []
        size = 0
        async for chunk in resp.content.iter_chunked(READ_CHUNK):
            size += len(chunk)
            if size > limit:
                raise FetchError("too_large", f"body exceeds {limit} bytes")
            chunks.append(chunk)
        return b"".join(chunks)


def _blocked(exc: BaseException) -> AddressBlocked | None:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, AddressBlocked):
            return seen
        inner = getattr(seen, "os_error", None)
        if isinstance(inner, AddressBlocked):
            return inner
        seen = seen.__cause__ or seen.__context__
    return None


def classify(exc: BaseException) -> FetchError:
    """Map a client exception to a FetchError kind."""
    blocked = _blocked(exc)
    if blocked is not None:
        return FetchError("blocked_address", str(blocked))
    if isinstance(exc, aiohttp.TooManyRedirects):
        return FetchError("too_many_redirects", str(exc.request_info.real_url))
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return FetchError("dns", str(exc))
    if isinstance(exc, aiohttp.ClientConnectorError):
        return FetchError("connect", str(exc))
    if isinstance(exc, asyncio.TimeoutError | aiohttp.ServerTimeoutError):
        return FetchError("timeout", str(exc) or "timed out")
    if isinstance(exc, aiohttp.InvalidURL | ValueError):
        return FetchError("invalid_url", str(exc))
    if isinstance(exc, aiohttp.ClientError):
        return FetchError("http_error", f"{type(exc).__name__}: {exc}")
    return FetchError("internal", f"{type(exc).__name__}: {exc}")
