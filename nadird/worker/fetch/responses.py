"""What the fetcher takes from one answer: its body, read raw and decoded
within bounds (decoding.py), the headers the worker keeps, and where a
redirect leads (checked: a bad Location is an invalid_url failure).

Apart from fetcher.py, which decides which requests to send (proxies,
sessions, redirects hop by hop); these only read a response.
"""

from __future__ import annotations

import aiohttp
from yarl import URL

from nadird.common.errors import ErrorKind, FetchError, InvalidURL
from nadird.common.urls import canonicalize
from nadird.config import FetchConfig
from nadird.worker.fetch.capture import HopRecorder
from nadird.worker.fetch.decoding import Bounded, decoder_for

READ_CHUNK = 64 * 1024
# Response headers the worker acts on (politeness, robots directives).
KEPT_HEADERS = ("retry-after", "x-robots-tag", "etag", "last-modified")


async def read_limited(
    config: FetchConfig,
    resp: aiohttp.ClientResponse,
    max_bytes: int | None,
    truncate: bool,
    kept: HopRecorder | None = None,
) -> tuple[bytes, bool]:
    """The body, decoded, and whether it was cut: at most fetch.max_body_bytes
    off the wire and `max_bytes` (default fetch.max_decoded_bytes) decoded;
    more fails as too_large unless `truncate`. `kept` records the raw bytes."""
    wire_limit = config.max_body_bytes
    limit = config.max_decoded_bytes if max_bytes is None else max_bytes
    declared = resp.content_length
    if declared is not None and declared > wire_limit and not truncate:
        raise FetchError(ErrorKind.TOO_LARGE, f"Content-Length {declared} exceeds {wire_limit}")
    decoder = decoder_for(resp.headers.get("Content-Encoding"))
    body = Bounded(limit)
    wire = 0
    async for chunk in resp.content.iter_chunked(READ_CHUNK):
        wire += len(chunk)
        if kept is not None:
            kept.body.feed(chunk)
        if wire > wire_limit:
            if truncate:
                return body.joined(), True
            raise FetchError(ErrorKind.TOO_LARGE, f"body exceeds {wire_limit} bytes")
        if body.take(decoder.feed(chunk), truncate):
            return body.joined(), True
    if body.take(decoder.finish(), truncate):
        return body.joined(), True
    return body.joined(), False


def kept_headers(resp: aiohttp.ClientResponse, stored: list[str]) -> dict[str, str]:
    """The headers the worker acts on and those the store keeps, by lower-case
    name; a header sent several times counts as one comma-separated value."""
    names = {*KEPT_HEADERS, *(name.lower() for name in stored)}
    return {h: ", ".join(resp.headers.getall(h)) for h in names if h in resp.headers}


def redirect_target(current: URL, location: str) -> URL:
    try:
        target = current.join(URL(location.strip())).with_fragment(None)
    except ValueError as exc:
        raise FetchError(
            ErrorKind.INVALID_URL, f"bad redirect Location {location[:200]!r}: {exc}"
        ) from None
    if target.scheme not in ("http", "https") or not target.host:
        raise FetchError(ErrorKind.INVALID_URL, f"redirect to {str(target)[:200]!r}")
    return target


def loop_key(url: str) -> str:
    """The canonical form: two spellings of one URL are one step of a loop."""
    try:
        return canonicalize(url)
    except InvalidURL as exc:
        raise FetchError(ErrorKind.INVALID_URL, str(exc)) from None
