"""Content-Encoding decoders that never produce more than they are asked for.

aiohttp can decompress by itself, but how much one network chunk may expand
to has changed between its versions; a gzip or brotli bomb turns 64 KiB on
the wire into gigabytes. The fetcher therefore reads the raw bytes and
decodes them here, in pieces of at most STEP bytes, checking its limit after
every piece: memory stays at the limit plus one piece, whatever the ratio.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from nadird.common.errors import ErrorKind, FetchError

STEP = 64 * 1024
# A gzip body may be several members back to back; a bomb may be millions.
MAX_GZIP_MEMBERS = 64

try:  # optional: pip install 'nadird[br]'
    import brotli as _brotli

    # Bounded output needs brotli >= 1.2 (output_buffer_limit).
    HAVE_BROTLI = hasattr(_brotli.Decompressor(), "can_accept_more_data")
except ImportError:  # pragma: no cover - depends on the environment
    _brotli = None
    HAVE_BROTLI = False


def accept_encoding() -> str:
    """The Accept-Encoding header: only what can be decoded here with a bound."""
    return "gzip, deflate, br" if HAVE_BROTLI else "gzip, deflate"


class Decoder(Protocol):
    def feed(self, data: bytes) -> Iterator[bytes]:
        """Decoded pieces of at most STEP bytes each (brotli: a little more,
        its output limit stops the buffer growing once past it)."""
        ...

    def finish(self) -> Iterator[bytes]:
        """What is left once the input has ended."""
        ...


class Identity:
    def feed(self, data: bytes) -> Iterator[bytes]:
        if data:
            yield data

    def finish(self) -> Iterator[bytes]:
        return iter(())


class ZlibDecoder:
    """gzip (possibly multi-member) or deflate (zlib-wrapped or raw)."""

    def __init__(self, gzip: bool) -> None:
        self._gzip = gzip
        self._obj: Any = zlib.decompressobj(31) if gzip else None
        self._members = 1

    def _start_deflate(self, data: bytes) -> None:
        # RFC 9110 'deflate' is zlib-wrapped; many servers send raw deflate.
        wrapped = len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0
        self._obj = zlib.decompressobj(15 if wrapped else -15)

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._obj is None:
            if not data:
                return
            self._start_deflate(data)
        try:
            yield from self._drain(data)
        except zlib.error as exc:
            raise FetchError(ErrorKind.CONTENT_ENCODING, f"bad compressed body: {exc}") from None

    def _drain(self, data: bytes) -> Iterator[bytes]:
        while True:
            out = self._obj.decompress(data, STEP)
            if out:
                yield out
            data = self._obj.unconsumed_tail
            if self._obj.eof:
                rest = self._obj.unused_data
                if not (self._gzip and rest.strip(b"\0")):
                    return
                self._members += 1
                if self._members > MAX_GZIP_MEMBERS:
                    raise FetchError(
                        ErrorKind.CONTENT_ENCODING, f"over {MAX_GZIP_MEMBERS} gzip members"
                    )
                self._obj = zlib.decompressobj(31)
                data = rest
                continue
            # A full piece may leave output inside zlib even with no input left;
            # an empty one with input left would mean zlib stalled: stop.
            if len(out) < STEP:
                return

    def finish(self) -> Iterator[bytes]:
        if self._obj is None:
            return
        try:
            yield from self._drain(b"")
        except zlib.error as exc:
            raise FetchError(ErrorKind.CONTENT_ENCODING, f"bad compressed body: {exc}") from None


class BrotliDecoder:
    def __init__(self) -> None:
        assert _brotli is not None
        self._obj: Any = _brotli.Decompressor()

    def feed(self, data: bytes) -> Iterator[bytes]:
        try:
            out = self._obj.process(data, output_buffer_limit=STEP)
            if out:
                yield out
            # Until it can take input again, it holds output to hand out.
            while not self._obj.can_accept_more_data():
                out = self._obj.process(b"", output_buffer_limit=STEP)
                if not out:
                    break
                yield out
        except _brotli.error as exc:
            raise FetchError(ErrorKind.CONTENT_ENCODING, f"bad brotli body: {exc}") from None

    def finish(self) -> Iterator[bytes]:
        return iter(())


def decoder_for(content_encoding: str | None) -> Decoder:
    """A decoder for a Content-Encoding header value; FetchError if unsupported."""
    coding = (content_encoding or "").strip().lower()
    if coding in ("", "identity"):
        return Identity()
    if coding in ("gzip", "x-gzip"):
        return ZlibDecoder(gzip=True)
    if coding == "deflate":
        return ZlibDecoder(gzip=False)
    if coding == "br" and HAVE_BROTLI:
        return BrotliDecoder()
    raise FetchError(ErrorKind.CONTENT_ENCODING, f"unsupported Content-Encoding {coding[:40]!r}")


def gunzip_limited(data: bytes, limit: int) -> bytes:
    """A gzip document (e.g. sitemap.xml.gz) decoded; FetchError past `limit` bytes."""
    decoder = ZlibDecoder(gzip=True)
    out: list[bytes] = []
    size = 0
    for piece in itertools.chain(decoder.feed(data), decoder.finish()):
        size += len(piece)
        if size > limit:
            raise FetchError(ErrorKind.TOO_LARGE, f"decompressed document exceeds {limit} bytes")
        out.append(piece)
    return b"".join(out)


class Bounded:
    """Decoded body pieces up to a limit: past it, cut (truncate) or refuse."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.chunks: list[bytes] = []

    def take(self, pieces: Iterable[bytes], truncate: bool) -> bool:
        """Add pieces; True when the limit was reached and the body was cut."""
        for piece in pieces:
            self.size += len(piece)
            if self.size > self.limit:
                if not truncate:
                    raise FetchError(
                        ErrorKind.TOO_LARGE, f"decoded body exceeds {self.limit} bytes"
                    )
                self.chunks.append(piece[: len(piece) - (self.size - self.limit)])
                return True
            self.chunks.append(piece)
        return False

    def joined(self) -> bytes:
        return b"".join(self.chunks)
