"""Keeping an HTTP exchange as it happened, for the web archive.

Only a fetch asked to capture (Bag.archive > 0) pays for this: the request
head as aiohttp sent it, the response head from the raw header lines aiohttp
received, and the body's bytes as they came off the connection (aiohttp
de-chunks them, and decodes nothing: the session has auto_decompress off), cut
at the bag's limit. The WARC then holds the Content-Encoding the server sent,
which is what replay tools and `warcio check` expect.
"""

from __future__ import annotations

import time

import aiohttp

from nadird.protocol.exchange import Exchange

# aiohttp hands the body over de-chunked, so the archived head must not claim
# chunking; the header is kept under this name, as the WARC guidelines suggest.
TRANSFER_ENCODING = b"transfer-encoding"
RENAMED_TRANSFER_ENCODING = b"X-Nadird-Transfer-Encoding"


class BodyCapture:
    """The raw body of one response, up to `limit` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._parts: list[bytes] = []
        self._size = 0
        self.truncated = False

    def feed(self, chunk: bytes) -> None:
        room = self.limit - self._size
        if room <= 0:
            self.truncated = self.truncated or bool(chunk)
            return
        if len(chunk) > room:
            chunk, self.truncated = chunk[:room], True
        self._parts.append(chunk)
        self._size += len(chunk)

    def joined(self) -> bytes:
        return b"".join(self._parts)


class HopRecorder:
    """One hop's request and response heads, taken as the response arrives
    (the connection, and so the peer's address, is gone once the body is read)."""

    def __init__(
        self, resp: aiohttp.ClientResponse, request_body: bytes, limit: int, direct: bool
    ) -> None:
        self.started = time.time()
        self.url = str(resp.url)
        self.request_head = _request_head(resp)
        self.response_head = _response_head(resp)
        self.request_body = request_body
        self.ip = _peer_ip(resp) if direct else ""  # through a proxy: the proxy's
        self.body = BodyCapture(limit)

    async def read_rest(self, resp: aiohttp.ClientResponse) -> Exchange:
        """The exchange of an answer the fetcher does not read (a redirect's)."""
        async for chunk in resp.content.iter_chunked(64 * 1024):
            self.body.feed(chunk)
            if self.body.truncated:
                break
        return self.exchange()

    def exchange(self) -> Exchange:
        return Exchange(
            url=self.url,
            started=self.started,
            request_head=self.request_head,
            response_head=self.response_head,
            body=self.body.joined(),
            request_body=self.request_body,
            ip=self.ip,
            truncated=self.body.truncated,
        )


def _request_head(resp: aiohttp.ClientResponse) -> bytes:
    info = resp.request_info
    target = info.url.raw_path_qs or "/"
    lines = [f"{info.method} {target} HTTP/1.1".encode("latin-1")]
    for name, value in info.headers.items():
        lines.append(f"{name}: {value}".encode("latin-1", "replace"))
    return b"\r\n".join([*lines, b"", b""])


def _response_head(resp: aiohttp.ClientResponse) -> bytes:
    version = resp.version
    major, minor = (version.major, version.minor) if version is not None else (1, 1)
    status = f"HTTP/{major}.{minor} {resp.status} {resp.reason or ''}".rstrip()
    lines = [status.encode("latin-1", "replace")]
    for name, value in resp.raw_headers:
        if name.lower() == TRANSFER_ENCODING:
            name = RENAMED_TRANSFER_ENCODING
        lines.append(name + b": " + value)
    return b"\r\n".join([*lines, b"", b""])


def _peer_ip(resp: aiohttp.ClientResponse) -> str:
    # aiohttp hands a connection back to its pool as soon as a short body is
    # in (resp.connection is then None); the protocol it came on stays, and
    # its transport is still the socket the answer came from.
    protocol = getattr(resp, "_protocol", None)
    transport = getattr(protocol, "transport", None)
    peer = transport.get_extra_info("peername") if transport is not None else None
    return str(peer[0]) if isinstance(peer, tuple) and peer else ""
