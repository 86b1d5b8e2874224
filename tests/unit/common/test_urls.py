"""URL canonicalization, fingerprints and registrable domains."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nadird.common.errors import InvalidURL
from nadird.common.urls import (
    _canonicalize_fast,
    _canonicalize_slow,
    canonicalize,
    domain_of,
    fingerprint,
    host_of,
    origin_of,
    registrable_domain,
)

# Each group spells one page in several ways; the first entry is the canonical form.
EQUIVALENT = [
    [
        "http://example.com/",
        "HTTP://EXAMPLE.COM/",
        "http://Example.Com",
        "http://example.com:80/",
        "http://example.com/#top",
        "  http://example.com/ \n",
    ],
    ["https://example.com/a", "https://example.com:443/a", "HTTPS://example.COM:443/a#x"],
    ["http://example.com/?a=1&b=2", "http://example.com/?b=2&a=1", "http://example.com?b=2&a=1#f"],
    ["http://example.com/?a=&b=", "http://example.com/?b&a="],
    ["http://example.com/~user", "http://example.com/%7Euser", "http://example.com/%7euser"],
    ["http://example.com/a%2Fb", "http://example.com/a%2fb"],
    ["http://example.com/c", "http://example.com/a/../c", "http://example.com/./c"],
    ["http://xn--bcher-kva.de/", "http://BÜCHER.de/", "http://bücher.de"],
    ["http://example.com:8080/", "http://example.com:08080/"],
    ["http://[::1]/", "http://[0:0::1]:80/"],
    ["http://example.com/a%20b?q=a+b", "http://example.com/a b?q=a%20b"],
]

DIFFERENT = [
    ("http://example.com/", "https://example.com/"),
    ("http://example.com/", "http://example.com:8080/"),
    ("https://example.com/", "https://example.com:80/"),
    ("http://example.com/a", "http://example.com/A"),
    ("http://example.com/?a=1", "http://example.com/?a=2"),
    ("http://example.com/?a=1", "http://example.com/?A=1"),
    ("http://example.com/a", "http://example.com/a/"),
    ("http://example.com/", "http://www.example.com/"),
]

INVALID = [
    "mailto:x@y",
    "javascript:void(0)",
    "http://",
    "https:///path",
    "ftp://a/b",
    "garbage",
    "",
    "//example.com/protocol-relative",
    "http://example.com:99999/",
    "http://[::1/",
    "http://exa mple.com/",
    "http://" + "a" * 5000 + ".com/",
]


@pytest.mark.parametrize("group", EQUIVALENT, ids=lambda g: g[0])
def test_equivalent_urls_collapse(group: list[str]) -> None:
    assert {canonicalize(u) for u in group} == {group[0]}


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_different_urls_stay_apart(a: str, b: str) -> None:
    assert canonicalize(a) != canonicalize(b)


@pytest.mark.parametrize("url", INVALID)
def test_invalid_urls_raise(url: str) -> None:
    with pytest.raises(InvalidURL):
        canonicalize(url)


def test_canonical_url_keeps_userinfo_and_custom_port() -> None:
    assert canonicalize("http://user:pw@Example.com:81/x") == "http://user:pw@example.com:81/x"


def test_fingerprint_is_16_stable_bytes() -> None:
    fp = fingerprint("https://example.com/")
    assert len(fp) == 16
    assert fp.hex() == "3259687d649f8e86106dd28ba70f1016"
    assert fingerprint("https://example.com/x") != fp


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("www.bbc.co.uk", "bbc.co.uk"),
        ("a.b.example.com", "example.com"),
        ("example.com", "example.com"),
        ("WWW.Example.COM", "example.com"),
        ("www.example.com:8080", "example.com"),
        ("example.com.", "example.com"),
        ("site-1.test", "site-1.test"),
        ("a.site-1.test", "site-1.test"),
        ("a.b.site-1.test", "site-1.test"),
        ("localhost", "localhost"),
        ("co.uk", "co.uk"),
        ("127.0.0.1", "127.0.0.1"),
        ("127.0.0.1:8080", "127.0.0.1"),
        ("::1", "::1"),
        ("[::1]:8080", "::1"),
    ],
)
def test_registrable_domain(host: str, domain: str) -> None:
    assert registrable_domain(host) == domain


@pytest.mark.parametrize(
    ("url", "host", "domain"),
    [
        ("http://shop.example.co.uk:8080/a", "shop.example.co.uk", "example.co.uk"),
        ("http://a.site-1.test/", "a.site-1.test", "site-1.test"),
        ("http://user@[::1]:81/", "::1", "::1"),
    ],
)
def test_host_and_domain_of(url: str, host: str, domain: str) -> None:
    assert host_of(url) == host
    assert domain_of(url) == domain


# URL-shaped text that often takes the fast path and often just misses it.
_LABELS = st.from_regex(r"[a-zA-Z0-9]([a-zA-Z0-9-]{0,6}[a-zA-Z0-9])?", fullmatch=True)
_URLISH = st.builds(
    "{}://{}{}{}{}{}".format,
    st.sampled_from(["http", "HTTPS", "ftp"]),
    st.lists(_LABELS, min_size=1, max_size=3).map(".".join),
    st.sampled_from(["", ":80", ":443", ":8080", ":0080", ":", ":70000"]),
    st.lists(st.text("aZ0-._~!$'()*+,=:@%/;[]é \t", max_size=6), max_size=3).map(
        lambda segments: "".join("/" + s for s in segments)
    ),
    st.one_of(
        st.just(""),
        st.lists(st.text("aZ09-._~+ %&=/é", max_size=5), max_size=3).map(
            lambda items: "?" + "&".join(items)
        ),
    ),
    st.sampled_from(["", "#", "#frag", "#é"]),
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_URLISH, st.text(max_size=40), st.text(max_size=30).map("http://".__add__)))
def test_canonicalize_is_idempotent(url: str) -> None:
    try:
        canonical = canonicalize(url)
    except InvalidURL:
        return
    assert canonicalize(canonical) == canonical


_DOTTY = st.builds(
    "http://h.test{}{}".format,
    st.lists(st.sampled_from(["", ".", "..", "...", "a", ".a", "a.", "b"]), max_size=6).map(
        lambda segments: "".join("/" + s for s in segments)
    ),
    st.sampled_from(["", "?q=1", "#x", "?b=2&a=1"]),
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_URLISH, _DOTTY))
def test_fast_path_agrees_with_w3lib_path(url: str) -> None:
    # The fast path is only an optimization: it must never change a result.
    fast = _canonicalize_fast(url)
    if fast is not None:
        assert fast == _canonicalize_slow(url)


_NETLOC_TEXT = st.text("aZ09.-_:@/?#[]\\ \t\n%é", max_size=20)


@settings(max_examples=500, deadline=None)
@given(st.one_of(_URLISH, _NETLOC_TEXT.map("http://".__add__), _NETLOC_TEXT))
def test_host_of_agrees_with_urlsplit(url: str) -> None:
    # host_of's string match is only an optimization of urlsplit's hostname.
    try:
        expected = urlsplit(url).hostname or ""
    except ValueError:  # a malformed IPv6 literal: no host either way
        return
    assert host_of(url) == expected


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(_URLISH, _NETLOC_TEXT.map("http://".__add__), _NETLOC_TEXT.map("https://".__add__))
)
def test_origin_of_agrees_with_urlsplit(url: str) -> None:
    try:
        parts = urlsplit(url)
    except ValueError:
        return
    assert origin_of(url) == f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
