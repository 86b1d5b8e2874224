"""What a client exception means: the FetchError kind a failed request is
recorded with, and a detail an operator can act on.

A refused connection says who refused it (the site, or the proxy in
between) in plain words rather than aiohttp's "Cannot connect to host ...
[Connect call failed ...]". A SOCKS5 proxy that answers it could not reach
the site (refused, unreachable) reports the site's failure, not its own: kind
`connect`, which the pool blames on the proxy only until the site has
failed through several (see proxies.py).
"""

from __future__ import annotations

import asyncio
import errno

import aiohttp

from nadird.common.errors import ErrorKind, FetchError
from nadird.worker.fetch.resolver import AddressBlocked


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


def _refused(exc: aiohttp.ClientConnectorError) -> bool:
    inner = exc.os_error
    return isinstance(inner, ConnectionRefusedError) or inner.errno == errno.ECONNREFUSED


# SOCKS5 replies (RFC 1928) about the target, not the proxy: network or host
# unreachable, connection refused, TTL expired.
_SOCKS_TARGET_REPLIES = frozenset({3, 4, 5, 6})


def _socks(exc: BaseException) -> FetchError:
    if getattr(exc, "error_code", None) in _SOCKS_TARGET_REPLIES:
        return FetchError(ErrorKind.CONNECT, f"the proxy could not reach the site: {exc}")
    return FetchError(ErrorKind.PROXY, f"{type(exc).__name__}: {exc}")


def _connect_detail(exc: aiohttp.ClientConnectorError, who: str) -> str:
    if _refused(exc):
        return f"{who} {exc.host}:{exc.port} refused the connection"
    return str(exc)


def classify(exc: BaseException) -> FetchError:
    """Map a client exception to a FetchError kind."""
    blocked = _blocked(exc)
    if blocked is not None:
        return FetchError(ErrorKind.BLOCKED_ADDRESS, str(blocked))
    if isinstance(exc, aiohttp.TooManyRedirects):
        return FetchError(ErrorKind.TOO_MANY_REDIRECTS, str(exc.request_info.real_url))
    if isinstance(exc, aiohttp.ClientProxyConnectionError):
        return FetchError(ErrorKind.PROXY, _connect_detail(exc, "the proxy"))
    if isinstance(exc, aiohttp.ClientHttpProxyError):
        return FetchError(ErrorKind.PROXY, f"{type(exc).__name__}: {exc}")
    if type(exc).__module__.startswith(("python_socks", "aiohttp_socks")):
        return _socks(exc)
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return FetchError(ErrorKind.DNS, str(exc))
    if isinstance(exc, aiohttp.ClientConnectorError):
        return FetchError(ErrorKind.CONNECT, _connect_detail(exc, "the site"))
    if isinstance(exc, asyncio.TimeoutError | aiohttp.ServerTimeoutError):
        return FetchError(ErrorKind.TIMEOUT, str(exc) or "timed out")
    if isinstance(exc, aiohttp.InvalidURL | ValueError):
        return FetchError(ErrorKind.INVALID_URL, str(exc))
    if isinstance(exc, aiohttp.ClientError):
        return FetchError(ErrorKind.HTTP_ERROR, f"{type(exc).__name__}: {exc}")
    return FetchError(ErrorKind.INTERNAL, f"{type(exc).__name__}: {exc}")
