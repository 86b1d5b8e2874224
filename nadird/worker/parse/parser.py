"""Turning a fetched body into an lxml document, decoded as browsers do.

Bad pages never raise: an empty, binary or unparsable body yields no
document. Field extraction is in fields.py, link discovery in follow/find.py.
"""

from __future__ import annotations

import hashlib

import lxml.html
from lxml import etree

from nadird.worker.parse import charsets

# WHATWG MIME sniffing treats a NUL byte as the mark of binary content. It is
# checked after decoding, where UTF-16/32 text no longer has any.
_SNIFF_CHARS = 1024


def decode_html(body: bytes, encoding: str | None = None) -> str:
    """A body as text, decoded the way browsers choose: BOM, then `encoding`
    (the HTTP header's charset), then <meta charset>, then UTF-8 if it is valid
    UTF-8, else a detector's guess, else windows-1252 (see charsets.py).
    Never raises; bad bytes become U+FFFD.
    """
    return charsets.decode_html(body, encoding)[1]


def parse_html(body: bytes, url: str, encoding: str | None = None) -> lxml.html.HtmlElement | None:
    """Parse an HTML body; None when it is empty, binary or unparsable.

    `encoding` is the charset from the HTTP header; see `decode_html`.
    """
    if not body or body.isspace():
        return None
    return parse_text(decode_html(body, encoding), url)


def parse_text(text: str, url: str) -> lxml.html.HtmlElement | None:
    """Parse a body already decoded by `decode_html` (for a caller that
    needs the text as well); None when it is binary or unparsable."""
    if not text or text.isspace() or "\x00" in text[:_SNIFF_CHARS]:
        return None
    try:
        # Decoding is done before, once, with browser rules (libxml2 alone would
        # take undeclared UTF-8 for Latin-1), so lxml gets UTF-8 and is told so.
        # A parser per call: parsers must not be shared between threads, and
        # making one costs ~2 µs against the milliseconds a page takes.
        parser = lxml.html.HTMLParser(encoding="utf-8")
        return lxml.html.document_fromstring(text.encode("utf-8"), parser=parser, base_url=url)
    except (etree.LxmlError, ValueError):
        return None


def content_checksum(body: bytes) -> str:
    """Hex blake2b-128 of a body: lets the store spot unchanged pages."""
    return hashlib.blake2b(body, digest_size=16).hexdigest()
