"""What a page says about itself: robots directives and its canonical URL.

* `<meta name="robots" content="noindex, nofollow">` (or `name=` our robots
  token), and the X-Robots-Tag header, optionally scoped as 'token: ...';
  'none' means both.
* `<link rel="canonical" href="...">`, resolved against the document base.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urljoin

from nadird.common.errors import InvalidURL
from nadird.common.urls import canonicalize
from nadird.worker.parse.base import Tree, base_url
from nadird.worker.parse.lexbor import LexborPage


@dataclass(frozen=True, slots=True)
class Directives:
    noindex: bool = False
    nofollow: bool = False


def _apply(words: list[str], noindex: bool, nofollow: bool) -> tuple[bool, bool]:
    for word in words:
        if word in ("noindex", "none"):
            noindex = True
        if word in ("nofollow", "none"):
            nofollow = True
    return noindex, nofollow


def _header_words(header: str, token: str) -> list[str]:
    """Directives of an X-Robots-Tag value meant for everyone or for `token`.

    'otherbot: noindex, nofollow' scopes both directives to otherbot: a bot
    name holds until the next one.
    """
    words: list[str] = []
    scope: str | None = None
    for part in header.lower().split(","):
        name, colon, rest = part.partition(":")
        name = name.strip()
        # 'unavailable_after: <date>' is a directive with a value, not a bot name.
        if colon and name and " " not in name and name != "unavailable_after":
            scope, part = name, rest
        if scope is None or scope == token:
            words.append(part.strip())
    return words


def _metas(doc: Tree) -> Iterator[tuple[str, str]]:
    """(name, content) of the page's <meta> elements, in document order."""
    if isinstance(doc, LexborPage):
        return doc.metas()
    return ((meta.get("name") or "", meta.get("content") or "") for meta in doc.iter("meta"))


def _link_rels(doc: Tree) -> Iterator[tuple[str, str]]:
    """(rel, href) of the page's <link> elements, in document order."""
    if isinstance(doc, LexborPage):
        return doc.link_rels()
    return ((link.get("rel") or "", link.get("href") or "") for link in doc.iter("link"))


def robots_directives(doc: Tree | None, header: str | None, token: str) -> Directives:
    token = token.lower()
    noindex = nofollow = False
    if header:
        noindex, nofollow = _apply(_header_words(header, token), noindex, nofollow)
    if doc is not None:
        for name, content in _metas(doc):
            if name.strip().lower() in ("robots", token):
                words = [w.strip() for w in content.lower().split(",")]
                noindex, nofollow = _apply(words, noindex, nofollow)
    return Directives(noindex=noindex, nofollow=nofollow)


def canonical_link(doc: Tree | None, page_url: str) -> str | None:
    """The canonical form of the page's first rel=canonical link, if it has a usable one."""
    if doc is None:
        return None
    for rel, raw_href in _link_rels(doc):
        if "canonical" not in rel.lower().split():
            continue
        href = raw_href.strip()
        if not href:
            return None
        try:
            return canonicalize(urljoin(base_url(doc, page_url), href))
        except (InvalidURL, ValueError):
            return None
    return None
