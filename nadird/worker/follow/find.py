"""A page's links: its <a>/<area> hrefs as canonical absolute URLs."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from urllib.parse import urljoin, urlsplit

from lxml import etree

from nadird.common.errors import InvalidURL
from nadird.common.urls import MAX_URL_LENGTH, canonicalize
from nadird.worker.parse.base import Tree, base_url
from nadird.worker.parse.lexbor import LexborPage

# Schemes whose links can never be fetched; rejecting them by prefix is much
# cheaper than resolving and canonicalizing them only to get InvalidURL.
_UNFOLLOWABLE_PREFIXES = ("javascript:", "mailto:", "tel:", "data:")

# Browsers delete ASCII tabs and newlines anywhere in an href before parsing it
# ('java\tscript:' is javascript:); doing the same first keeps the prefix
# checks below honest.
_TAB_OR_NEWLINE = str.maketrans("", "", "\t\n\r")

# Every href of <a> and <area> in document order, as plain strings: one
# XPath call walks the tree in C and makes no element proxies, which the
# Python loop over doc.iter() paid for on every link (pages of a few hundred
# links). Only when rel=nofollow matters are the elements themselves needed.
_HREFS = etree.XPath("//a/@href | //area/@href", smart_strings=False)


def extract_links(doc: Tree | None, page_url: str, respect_nofollow: bool = False) -> list[str]:
    """Canonical URLs of the page's <a>/<area> links, deduped, in document order.

    Relative links resolve against <base href> if the page has one. Links back
    to the page itself and to unfetchable schemes are left out.
    """
    if doc is None:
        return []
    resolve = _Resolver(base_url(doc, page_url))
    seen_hrefs: set[str] = set()
    # After a redirect the page URL may be unknown to the master; a self-link
    # ('#top', a logo link) would then get the same page fetched again.
    page = _canonical_or_none(page_url)
    seen: set[str] = {page} if page is not None else set()
    links: list[str] = []
    for raw in _raw_hrefs(doc, respect_nofollow):
        # Pages repeat the same hrefs (menus, footers): skip them before paying
        # for resolution and canonicalization.
        if raw in seen_hrefs:
            continue
        seen_hrefs.add(raw)
        href = _followable(raw)
        if href is None:
            continue
        url = resolve(href)
        if url is not None and url not in seen:
            seen.add(url)
            links.append(url)
    return links


def _raw_hrefs(doc: Tree, respect_nofollow: bool) -> list[str]:
    """The href values of the page's <a>/<area> elements, in document order
    (without the rel=nofollow ones when they are not followed)."""
    if isinstance(doc, LexborPage):
        return doc.hrefs(respect_nofollow)
    if not respect_nofollow:
        hrefs = _HREFS(doc)
        # An attribute-only path with smart_strings=False gives a list of str.
        return hrefs if isinstance(hrefs, list) else []  # type: ignore[return-value]
    return [
        element.get("href") or ""
        for element in doc.iter("a", "area")
        if "nofollow" not in (element.get("rel") or "").lower().split()
    ]


def _followable(href: str) -> str | None:
    """The href as a browser reads it (no tabs or newlines, trimmed), or None
    if it is empty or of a scheme that cannot be fetched."""
    if "\t" in href or "\n" in href or "\r" in href:  # rare: skip the slow translate
        href = href.translate(_TAB_OR_NEWLINE)
    href = href.strip()
    if not href or href[:11].lower().startswith(_UNFOLLOWABLE_PREFIXES):
        return None
    return href


def resolve_hrefs(hrefs: Iterable[str], page_url: str) -> list[str]:
    """Canonical URLs of hrefs found outside <a> elements (JSON values, a
    next-page field), resolved against the page URL, deduped, in order. The
    same rules as for a page's links: unfetchable schemes and the page itself
    are left out."""
    resolve = _Resolver(page_url)
    page = _canonical_or_none(page_url)
    seen: set[str] = {page} if page is not None else set()
    links: list[str] = []
    for raw in hrefs:
        href = raw.translate(_TAB_OR_NEWLINE).strip()
        if not href or href.lower().startswith(_UNFOLLOWABLE_PREFIXES):
            continue
        url = resolve(href)
        if url is not None and url not in seen:
            seen.add(url)
            links.append(url)
    return links


def href_resolver(base: str) -> Callable[[str], str | None]:
    """One href at a time as resolve_hrefs resolves it (None: no canonical
    URL), for callers that keep what they know of each href (a feed's
    entries): the same fast paths and cache as a page's links."""
    resolve = _Resolver(base)
    return lambda href: resolve(href.translate(_TAB_OR_NEWLINE).strip())


def _origin(base: str) -> str | None:
    """'scheme://netloc' of the base URL, or None if it has none."""
    try:
        parts = urlsplit(base)
    except ValueError:
        return None
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else None


def _folder(base: str, origin: str | None) -> str | None:
    """The base URL up to the last '/' of its path: what a relative path
    ('page-2.html', 'a/b') is appended to. None when the base is unusual."""
    if origin is None or not base.startswith(origin):
        return None
    rest = base[len(origin) :]
    end = len(rest)
    for stop in "?#":
        found = rest.find(stop, 0, end)
        if found >= 0:
            end = found
    slash = rest.rfind("/", 0, end)
    return origin + (rest[: slash + 1] if slash >= 0 else "/")


class _Resolver:
    """Hrefs of one page -> canonical absolute URLs (None if they have none).

    urljoin costs more than canonicalizing, so the commonest shapes skip it:
    '/path' is appended to the origin, a relative path without a scheme to
    the base's folder, and an absolute http(s) URL is taken as is. Dot
    segments urljoin would have resolved, canonicalize resolves.
    """

    __slots__ = ("_base", "_folder", "_origin")

    def __init__(self, base: str) -> None:
        self._base = base
        self._origin = _origin(base)
        self._folder = _folder(base, self._origin)

    def __call__(self, href: str) -> str | None:
        first = href[:1]
        if first == "/":
            if self._origin is not None and not href.startswith("//"):
                return _canonical_or_none(self._origin + href)
        elif first not in ("?", "#", ";", "") and self._folder is not None and ":" not in href:
            # No ':' at all, so no scheme: a relative path (RFC 3986 4.2).
            # (urljoin reads a leading ';' as parameters of the base's path.)
            return _canonical_or_none(self._folder + href)
        elif href[:8].lower().startswith(("http://", "https://")):
            return _canonical_or_none(href)
        try:
            absolute = urljoin(self._base, href)
        except ValueError:  # a bad IPv6 literal
            return None
        return _canonical_or_none(absolute)


# Canonical forms of the absolute URLs this process resolved lately. The
# pages of a site share their menus, breadcrumbs and footers, and a relative
# href joined to the same folder gives the same string on every page of that
# folder, so most links of a page were canonicalized already (about 3 in 4 on
# a javadoc tree). Bounded: emptied when full, which keeps a worker's memory
# flat (a few MB at most) and costs one miss per entry afterwards.
CACHE_LIMIT = 8192
_canonical_cache: dict[str, str | None] = {}


# A fragment canonicalize drops whichever path it takes: printable ASCII.
_DROPPED_FRAGMENT = re.compile(r"[\x21-\x7e]*")


def _cache_key(url: str) -> str:
    """The URL without the fragment canonicalize would drop anyway, so that
    the anchors of one page ('api.html#a1f3', '#a2c4'...: a reference page's
    members) share one entry; the URL itself when that is not certain."""
    base, hash_sign, fragment = url.partition("#")
    if (
        not hash_sign
        or len(url) > MAX_URL_LENGTH  # refused whole, fragment included
        # 'a #b' keeps its space or control character (escaped); 'a ' would
        # lose it to the stripping of the URL's ends.
        or base[-1:] <= " "
        or base[-1:].isspace()
        or not _DROPPED_FRAGMENT.fullmatch(fragment)
    ):
        return url
    return base


def _canonical_or_none(url: str) -> str | None:
    url = _cache_key(url)
    try:
        return _canonical_cache[url]
    except KeyError:
        pass
    try:
        canonical: str | None = canonicalize(url)
    except InvalidURL:
        canonical = None
    if canonical == url:
        canonical = url  # one string object for key and value
    if len(_canonical_cache) >= CACHE_LIMIT:
        _canonical_cache.clear()
    _canonical_cache[url] = canonical
    return canonical
