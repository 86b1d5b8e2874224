"""extract_links' shortcuts against the plain walk they replace.

The hrefs come from one XPath call instead of a loop over the <a>/<area>
elements, tabs and newlines are only translated away when there are any,
and canonical forms come from a bounded per-process cache: none of that may
change which links a page gives, nor their order.
"""

from __future__ import annotations

import lxml.html
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nadird.common.errors import InvalidURL
from nadird.common.urls import canonicalize
from nadird.worker.follow import find
from nadird.worker.follow.find import _Resolver, extract_links
from nadird.worker.parse.base import base_url

PAGE = "http://docs.example.com:8080/api/java/util/List.html"

PIECES = [
    "", " ", "#", "#top", "?q=1", "../", "./", "a.html", "b/", "/root.html", "//cdn.example.com/x",
    "http://docs.example.com:8080/api/", "https://Other.example.org/p?b=2&a=1", "javascript:x()",
    " JavaScript:void(0)", "mailto:a@b.c", "tel:1", "data:,x", "java\tscript:x", "\n../c.html\r",
    "a\n.html", "sub\r/x.html",
    "%7Euser/", "ünï.html", "http://[::1]/", "http://bad host/", ";p=1", "Object.html#equals()",
]  # fmt: skip

hrefs = st.lists(st.sampled_from(PIECES), min_size=1, max_size=3).map("".join)
anchors = st.tuples(
    st.sampled_from(["a", "area", "span", "link"]),
    st.one_of(st.none(), hrefs),
    st.sampled_from(
        [None, "nofollow", "NoFollow noopener", "next", "NOFOLLOW", "nofollowing", "a\tnofollow"]
    ),
)


def _page(
    elements: list[tuple[str, str | None, str | None]], base: str | None
) -> lxml.html.HtmlElement:
    doc = lxml.html.document_fromstring("<html><head></head><body><p>x</p></body></html>")
    if base is not None:
        head = doc.find("head")
        assert head is not None
        head.append(lxml.html.Element("base", href=base))
    body = doc.find("body")
    assert body is not None
    for tag, href, rel in elements:
        element = lxml.html.Element(tag)
        if href is not None:
            element.set("href", href)
        if rel is not None:
            element.set("rel", rel)
        body.append(element)
    return doc


def _plain_walk(doc: lxml.html.HtmlElement, page_url: str, nofollow: bool) -> list[str]:
    """The element-by-element walk, resolving every href afresh."""
    resolve = _Resolver(base_url(doc, page_url))
    seen = {canonicalize(page_url)}
    links: list[str] = []
    for element in doc.iter("a", "area"):
        href = (element.get("href") or "").translate(str.maketrans("", "", "\t\n\r")).strip()
        if not href or href.lower().startswith(("javascript:", "mailto:", "tel:", "data:")):
            continue
        if nofollow and "nofollow" in (element.get("rel") or "").lower().split():
            continue
        find._canonical_cache.clear()  # no help from the cache
        url = resolve(href)
        if url is not None and url not in seen:
            seen.add(url)
            links.append(url)
    return links


@settings(max_examples=300, deadline=None)
@given(
    st.lists(anchors, max_size=12),
    st.sampled_from([None, "/other/", "../up/", "https://mirror.example.net/m/", "ftp://x/"]),
    st.booleans(),
)
def test_extract_links_agrees_with_the_plain_walk(
    elements: list[tuple[str, str | None, str | None]], base: str | None, nofollow: bool
) -> None:
    doc = _page(elements, base)
    expected = _plain_walk(doc, PAGE, nofollow)
    assert extract_links(doc, PAGE, nofollow) == expected
    assert extract_links(doc, PAGE, nofollow) == expected  # now from the cache


@settings(max_examples=300, deadline=None)
@given(st.lists(hrefs, min_size=1, max_size=6))
def test_cached_canonical_forms_are_canonicalize(parts: list[str]) -> None:
    url = "http://docs.example.com:8080/api/" + "".join(parts)
    try:
        expected: str | None = canonicalize(url)
    except InvalidURL:
        expected = None
    assert find._canonical_or_none(url) == expected
    assert find._canonical_or_none(url) == expected


def test_the_cache_stays_within_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(find, "CACHE_LIMIT", 50)
    find._canonical_cache.clear()
    for n in range(500):
        assert find._canonical_or_none(f"http://a.example.com/p{n}?b=1&a=2") == (
            f"http://a.example.com/p{n}?a=2&b=1"
        )
        assert len(find._canonical_cache) <= 50


def _canonical_or_none(url: str) -> str | None:
    try:
        return canonicalize(url)
    except InvalidURL:
        return None


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["http://a.example.com/p", "HTTP://A.example.com:80/x/../p", "http://a/ b"]),
    st.text(st.characters(codec="utf-8"), max_size=6),
    st.text(max_size=8),
    st.sampled_from(["", " ", "\t"]),
)
def test_fragments_share_an_entry_only_when_canonicalize_drops_them(
    stem: str, path: str, fragment: str, tail: str
) -> None:
    """The cache keys a URL without its fragment; the answer must still be
    canonicalize's for the whole URL (spaces before '#', long URLs...)."""
    find._canonical_cache.clear()
    url = f"{stem}{path}{tail}#{fragment}"
    first = find._canonical_or_none(f"{stem}{path}{tail}#other")
    assert find._canonical_or_none(url) == _canonical_or_none(url)
    assert first == _canonical_or_none(f"{stem}{path}{tail}#other")


def test_a_reference_page_anchors_are_canonicalized_once(monkeypatch: pytest.MonkeyPatch) -> None:
    find._canonical_cache.clear()
    calls: list[str] = []

    def counted(url: str) -> str:
        calls.append(url)
        return canonicalize(url)

    monkeypatch.setattr(find, "canonicalize", counted)
    anchors = "".join(f'<a href="Widget.html#a{n:04x}">m</a>' for n in range(200))
    doc = lxml.html.document_fromstring(f"<body>{anchors}<a href='Other.html#top'>o</a></body>")
    assert extract_links(doc, PAGE) == [
        "http://docs.example.com:8080/api/java/util/Widget.html",
        "http://docs.example.com:8080/api/java/util/Other.html",
    ]
    assert len(calls) == 3  # the page itself, Widget.html, Other.html
    long_url = "http://a.example.com/" + "x" * 4090 + "#f"
    assert find._canonical_or_none(long_url) is None  # too long as a whole
