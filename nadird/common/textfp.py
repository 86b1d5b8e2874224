"""Fingerprint of a page's main text, for content deduplication.

Two URLs often serve the same content (session ids, tracking parameters,
mirrors, print views). URL canonicalization cannot see that; the text can.
The fingerprint is blake2b-128 of the text of <body> without scripts and
styles, whitespace-collapsed and lower-cased, so markup churn (attributes,
indentation, ad slots without text) does not make two copies look different.
"""

from __future__ import annotations

import hashlib
import re

import lxml.etree
import lxml.html

_HTML_MARKERS = ("html", "xhtml")
_NOT_TEXT = ("script", "style", "noscript", "template")
_SPACE = re.compile(r"\s+")


def is_html(content_type: str | None) -> bool:
    return content_type is not None and any(m in content_type.lower() for m in _HTML_MARKERS)


def main_text(body: bytes) -> str:
    """The normalized text of the page's <body> ('' when there is none)."""
    try:
        root = lxml.html.document_fromstring(body)
    except (lxml.etree.ParserError, ValueError):
        return ""
    return text_of(root)


def text_of(root: lxml.html.HtmlElement) -> str:
    """The normalized text of a parsed page's <body> (scripts and styles dropped
    from the tree: a caller passes a tree it no longer needs)."""
    found = root.find("body")
    element = found if found is not None else root
    # Listed first: dropping nodes while iterating would skip their siblings.
    for node in list(element.iter(*_NOT_TEXT)):
        if isinstance(node, lxml.html.HtmlElement):
            node.drop_tree()
    # Joined with spaces: "<p>ab</p><p>c</p>" and "<p>a</p><p>bc</p>" differ.
    text = " ".join(t if isinstance(t, str) else t.decode() for t in element.itertext())
    return _SPACE.sub(" ", text).strip().lower()


def text_fingerprint(content_type: str | None, body: bytes | None) -> bytes | None:
    """16-byte fingerprint of the main text, or None when there is nothing to compare.

    Pages without text (non-HTML, empty body) get None: every empty page would
    otherwise be a "duplicate" of the first one.
    """
    if not body or not is_html(content_type):
        return None
    text = main_text(body)
    if not text:
        return None
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()
