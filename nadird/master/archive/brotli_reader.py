"""Brotli for warcio's readers, with the Brotli library nadird uses.

warcio 1.8 decodes `Content-Encoding: br` through the API of brotlipy (a
Decompressor with a settable `unused_data`); Google's Brotli, which nadird
needs for its bounded decoding, has no such attribute, and every warcio reader
that decodes a br body (its indexers, py-wacz's, `warcio check`) then fails.
This adapter gives warcio the methods it calls.
"""

from __future__ import annotations

from typing import Any


class _Decompressor:
    def __init__(self, brotli: Any) -> None:
        self._inner = brotli.Decompressor()
        self.unused_data: bytes | None = None  # a br stream has no member after it

    def decompress(self, data: bytes) -> bytes:
        out: bytes = self._inner.process(data)
        return out

    def flush(self) -> bytes:
        return b""


def install() -> None:
    """Make warcio decode br with Brotli (nothing to do without it)."""
    try:
        import brotli
    except ImportError:
        return
    from warcio.bufferedreaders import BufferedReader

    if not hasattr(brotli.Decompressor(), "process"):
        return  # brotlipy: warcio's own code works
    BufferedReader.DECOMPRESSORS["br"] = lambda: _Decompressor(brotli)
