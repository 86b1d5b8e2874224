"""Field extraction, link discovery and link filtering on saved pages."""

from __future__ import annotations

import hashlib
import random
import re
from urllib.parse import urljoin

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from lxml.html import HtmlElement

from nadird.common.errors import InvalidURL
from nadird.common.urls import canonicalize
from nadird.job.link_rules import LinkFilter, validate_link_rules
from nadird.job.selectors import validate_fields
from nadird.job.spec import LinkRules, Selector
from nadird.worker.follow.find import _Resolver, extract_links
from nadird.worker.parse.fields import extract_fields
from nadird.worker.parse.parser import content_checksum, parse_html

PAGE_URL = "https://shop.example.com/products/widget-42"

PRODUCT_PAGE = """<!DOCTYPE html>
<html>
<head>
  <title>Acme Widget 42 - Acme Store</title>
  <base href="/catalog/">
  <meta name="sku" content=" WID-42 ">
</head>
<body>
  <h1 class="product-title">  Acme
      <em>Widget</em>   42 </h1>
  <div class="price-box"><span class="price" data-currency="EUR">EUR 19.99</span></div>
  <ul class="tags"><li>red</li><li>  </li><li>small</li></ul>
  <script>var productId = 4242; var related = "WID-43";</script>
  <nav>
    <a href="widgets/43">Next widget</a>
    <a href="/about">About</a>
    <a href="../help?b=2&amp;a=1">Help</a>
    <a href="HTTPS://Shop.Example.com:443/about#team">Team (same page as About)</a>
    <a href="https://partner.example.org/x">Partner</a>
    <a href="widgets/43">Next widget, again</a>
    <a href="#reviews">Reviews (resolves against the base, not the page)</a>
    <a href="https://shop.example.com/products/widget-42#specs">Specs (this page)</a>
    <a href="sale" rel="external NoFollow">Sale</a>
    <a href="mailto:sales@example.com">Mail</a>
    <a href="javascript:void(0)">Menu</a>
    <a href=" JavaScript:alert(1)">Menu</a>
    <a href="tel:+15551234">Call</a>
    <a href="data:text/html,hi">Data</a>
    <a href="ftp://files.example.com/manual.pdf">Manual</a>
    <a href="http://[bad/">Broken</a>
    <a href="">Empty</a>
    <a href="   ">Blank</a>
    <a>No href</a>
  </nav>
  <map name="m"><area shape="rect" coords="0,0,1,1" href="/map/north"></map>
</body>
</html>
"""

EXPECTED_LINKS = [
    "https://shop.example.com/catalog/widgets/43",
    "https://shop.example.com/about",
    "https://shop.example.com/help?a=1&b=2",
    "https://partner.example.org/x",
    "https://shop.example.com/catalog/",
    "https://shop.example.com/catalog/sale",
    "https://shop.example.com/map/north",
]


@pytest.fixture(scope="module")
def doc() -> HtmlElement:
    parsed = parse_html(PRODUCT_PAGE.encode(), PAGE_URL)
    assert parsed is not None
    return parsed


def _fields(doc: HtmlElement, **fields: list[Selector]) -> dict[str, str | list[str] | None]:
    return extract_fields(doc, PRODUCT_PAGE, fields)


@pytest.mark.parametrize(
    ("selectors", "expected"),
    [
        ([Selector(xpath="//title")], "Acme Widget 42 - Acme Store"),
        ([Selector(xpath="//h1")], "Acme Widget 42"),
        ([Selector(xpath="//meta[@name='sku']/@content")], "WID-42"),
        ([Selector(xpath="//span[@class='price']", attr="data-currency")], "EUR"),
        ([Selector(xpath="count(//ul[@class='tags']/li)")], "3"),
        ([Selector(xpath="boolean(//span[@class='price'])")], "true"),
        ([Selector(css="span.price")], "EUR 19.99"),
        ([Selector(css="span.price", attr="data-currency")], "EUR"),
        ([Selector(css="META[name=sku]", attr="content")], "WID-42"),
        ([Selector(regex=r"productId = (\d+)")], "4242"),
        ([Selector(regex=r"WID-\d+")], "WID-42"),
        ([Selector(css="ul.tags li", multiple=True)], ["red", "small"]),
        ([Selector(regex=r"WID-\d+", multiple=True)], ["WID-42", "WID-43"]),
        # Fallbacks: the first selector finds nothing, the second wins.
        ([Selector(css="h2.name"), Selector(xpath="//h1")], "Acme Widget 42"),
        ([Selector(xpath="//span[@class='amount']/text()"), Selector(css=".price")], "EUR 19.99"),
        ([Selector(regex=r"price: (\d+)"), Selector(regex=r"productId = (\d+)")], "4242"),
        ([Selector(css=".none", multiple=True), Selector(css="ul.tags li")], "red"),
        ([Selector(css="ul.tags li:nth-child(2)"), Selector(css="ul.tags li")], "red"),
        (
            [Selector(xpath="number(//span[@id='none'])"), Selector(xpath="//title")],
            "Acme Widget 42 - Acme Store",
        ),
        # Nothing matches.
        (
            [Selector(xpath="//div[@id='nope']"), Selector(css=".nope"), Selector(regex="n(o)pe")],
            None,
        ),
        ([Selector(css=".nope", multiple=True)], None),
        ([Selector(xpath="//meta[@name='sku']/@missing")], None),
        ([], None),
    ],
)
def test_extract_fields(doc: HtmlElement, selectors: list[Selector], expected: object) -> None:
    assert _fields(doc, value=selectors) == {"value": expected}


def test_extract_fields_keeps_field_order_and_names(doc: HtmlElement) -> None:
    fields = {"b": [Selector(css="h1")], "a": [Selector(css=".nope")]}
    assert list(extract_fields(doc, PRODUCT_PAGE, fields).items()) == [
        ("b", "Acme Widget 42"),
        ("a", None),
    ]


def test_extract_fields_without_document_still_runs_regexes() -> None:
    fields = {"id": [Selector(regex=r"productId = (\d+)")], "title": [Selector(xpath="//title")]}
    assert extract_fields(None, PRODUCT_PAGE, fields) == {"id": "4242", "title": None}


def test_extract_fields_names_a_bad_selector(doc: HtmlElement) -> None:
    with pytest.raises(ValueError, match=r"fields\.title\[1\]: invalid xpath '//\['"):
        _fields(doc, title=[Selector(css=".nope"), Selector(xpath="//[")])


def test_extract_links(doc: HtmlElement) -> None:
    assert extract_links(doc, PAGE_URL) == EXPECTED_LINKS


def test_extract_links_respecting_nofollow(doc: HtmlElement) -> None:
    links = extract_links(doc, PAGE_URL, respect_nofollow=True)
    assert links == [u for u in EXPECTED_LINKS if not u.endswith("/sale")]


def test_extract_links_without_base_resolves_against_page() -> None:
    html = b'<a href="b?z=1&y=2#x">b</a><a href="b?y=2&z=1">same</a><a href="#top">self</a>'
    doc = parse_html(html, "http://Example.com:80/dir/page")
    assert extract_links(doc, "http://Example.com:80/dir/page") == [
        "http://example.com/dir/b?y=2&z=1"
    ]


def test_extract_links_ignores_unusable_base() -> None:
    html = b'<base href="javascript:x"><a href="next">n</a>'
    doc = parse_html(html, "http://example.com/a/b")
    assert extract_links(doc, "http://example.com/a/b") == ["http://example.com/a/next"]


def test_extract_links_of_no_document() -> None:
    assert extract_links(None, PAGE_URL) == []


def _urljoin_then_canonicalize(base: str, href: str) -> str | None:
    try:
        return canonicalize(urljoin(base, href))
    except (ValueError, InvalidURL):
        return None


_BASES = st.sampled_from(
    [
        PAGE_URL,
        "http://Example.com:80/a/b?q=1#f",
        "http://u@h.test:81",
        "http://h.test/dir/",
        "HTTP://h.test/a/b.html",
        "http://h.test/a/b?x=/c/d",
        "http://h.test/a/b#/c/d",
        "http://h.test/a;p/b;q",
    ]
)
_HREFS = st.one_of(
    st.text(alphabet="/.a?#:%2F@[]é;", max_size=12),
    st.builds(
        str.__add__,
        st.sampled_from(
            ["/", "//", "http://x", "HTTPS://y.test", "./", "../", "?", "#", "/..", "a/", "b.html"]
        ),
        st.text(alphabet="/.aB?#:%7e@&=", max_size=12),
    ),
)


@settings(max_examples=300, deadline=None)
@given(_BASES, _HREFS)
def test_link_resolution_shortcuts_agree_with_urljoin(base: str, href: str) -> None:
    # extract_links skips urljoin for '/path', relative and absolute hrefs. Where urljoin
    # departs from the URL standard it is not the reference: it folds '//' in a
    # path and reads an empty authority ('https://') as a relative link.
    path = href.partition("?")[0].partition("#")[0]
    assume("//" not in (path[2:] if path.startswith("//") else path))
    assume(re.match(r"(?i)https?://(?:[/?#]|$)", href) is None)
    assert _Resolver(base)(href) == _urljoin_then_canonicalize(base, href)


SAME = LinkRules()
LISTED = LinkRules(
    scope="allowed-domains",
    allowed_domains=["example.org", "Shop.Example.com", "*.bücher.de", "10.0.0.1"],
)
ANY = LinkRules(scope="any")
ALLOW = LinkRules(allow=[r"/products/", r"/catalog/"])
DENY = LinkRules(deny=[r"[?&]sort=", r"/logout"])


@pytest.mark.parametrize(
    ("rules", "url", "expected"),
    [
        (SAME, "https://shop.example.com/a", True),
        (SAME, "https://www.example.com/a", True),
        (SAME, "http://example.com/", True),
        (SAME, "https://example.org/", False),
        (SAME, "https://example.com.evil.net/", False),
        (LISTED, "https://example.org/", True),
        (LISTED, "https://a.b.example.org/", True),
        (LISTED, "https://badexample.org/", False),
        (LISTED, "https://shop.example.com/", True),
        (LISTED, "https://eu.shop.example.com/", True),
        (LISTED, "https://www.example.com/", False),
        (LISTED, "http://xn--bcher-kva.de/", True),
        (LISTED, "http://10.0.0.1:8080/", True),
        (LinkRules(scope="allowed-domains", allowed_domains=["0.0.1"]), "http://10.0.0.1/", False),
        (ANY, "https://anything.example.net/x", True),
        (ALLOW, "https://www.example.com/products/1", True),
        (ALLOW, "https://www.example.com/about", False),
        (ALLOW, "https://other.example.net/products/1", False),
        (DENY, "https://www.example.com/list?sort=asc", False),
        (DENY, "https://www.example.com/list?page=2", True),
        (LinkRules(allow=[r"/list"], deny=[r"sort="]), "https://example.com/list?sort=1", False),
        (LinkRules(scope="any", allow=[r"\.pdf$"]), "https://example.org/a.pdf", True),
        (LinkRules(scope="any", allow=[r"\.pdf$"]), "https://example.org/a.html", False),
        (LinkRules(follow=False), "https://www.example.com/a", False),
    ],
)
def test_link_filter(rules: LinkRules, url: str, expected: bool) -> None:
    # The worker passes the page's host or its registrable domain; both must work.
    assert LinkFilter(rules, "www.example.com").allowed(url) is expected
    assert LinkFilter(rules, "example.com").allowed(url) is expected


def test_link_filter_same_domain_with_unknown_suffix() -> None:
    link_filter = LinkFilter(LinkRules(), "a.site-1.test")
    assert link_filter.allowed("http://b.site-1.test:8001/")
    assert not link_filter.allowed("http://site-2.test/")


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        (LinkRules(allow=["ok", "("]), r"links\.allow\[1\]: invalid regex '\('"),
        (LinkRules(deny=["[a-"]), r"links\.deny\[0\]"),
        (LinkRules(allowed_domains=["https://x.org/"]), r"links\.allowed_domains\[0\]"),
    ],
)
def test_bad_link_rules_raise(rules: LinkRules, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LinkFilter(rules, "example.com")
    with pytest.raises(ValueError, match=message):
        validate_link_rules(rules)


@pytest.mark.parametrize(
    ("selectors", "message"),
    [
        ([Selector(xpath="//h1"), Selector(xpath="//[")], r"fields\.f\[1\]: invalid xpath '//\['"),
        ([Selector(regex="(unclosed")], r"fields\.f\[0\]: invalid regex '\(unclosed'"),
        ([Selector(css="a[")], r"fields\.f\[0\]: invalid css 'a\['"),
        ([Selector(css="p::text")], r"fields\.f\[0\]: invalid css"),
        ([Selector(xpath="foo()")], r"fields\.f\[0\]: cannot evaluate xpath 'foo\(\)'"),
        ([Selector(xpath="//x:div")], r"fields\.f\[0\]: cannot evaluate xpath"),
        ([Selector(xpath="  ")], r"fields\.f\[0\]: empty xpath"),
        ([Selector(regex="a(b)", attr="href")], r"fields\.f\[0\]: attr"),
    ],
)
def test_validate_fields_names_the_bad_selector(selectors: list[Selector], message: str) -> None:
    fields = {"ok": [Selector(css="h1")], "f": selectors}
    with pytest.raises(ValueError, match=message):
        validate_fields(fields)


def test_validate_fields_accepts_good_selectors() -> None:
    validate_fields(
        {
            "a": [Selector(xpath="//a/@href", multiple=True), Selector(css="a", attr="href")],
            "b": [Selector(regex=r"id=(\d+)"), Selector(xpath="count(//p)")],
        }
    )


_RNG = random.Random(1234)

MALFORMED = [
    b"",
    b"   \n\t ",
    b"\x00\x01\x02\xff\xfe binary",
    _RNG.randbytes(4096),
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    b"<html><body><a href=",
    b"<a href='http://example.com/x'",
    b"<!-- just a comment -->",
    b"<div>" * 100_000 + b"<a href='/deep'>deep</a>",
    b"</p></p><p><<<>>><a href=/x>x</b></i></table>",
    b"<?xml version='1.0' encoding='utf-8'?><html><a href='/x'>x</a></html>",
    "<p>caf\u00e9</p>".encode("utf-16"),
]


@pytest.mark.parametrize("body", MALFORMED, ids=range(len(MALFORMED)))
@pytest.mark.parametrize("encoding", [None, "utf-8", "latin-1", "no-such-charset"])
def test_malformed_pages_never_raise(body: bytes, encoding: str | None) -> None:
    doc = parse_html(body, PAGE_URL, encoding)
    fields = {"t": [Selector(xpath="//title"), Selector(css="a", attr="href")]}
    extract_fields(doc, body.decode("utf-8", errors="replace"), fields)
    assert all(u.startswith("https://") for u in extract_links(doc, PAGE_URL))


def test_empty_and_binary_bodies_give_no_document() -> None:
    assert parse_html(b"", PAGE_URL) is None
    assert parse_html(b" \n ", PAGE_URL) is None
    assert parse_html(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", PAGE_URL) is None


def test_unclosed_link_and_utf16_page_still_parse() -> None:
    doc = parse_html(b"<p>a <a href='/x'>x</a> <a href=", PAGE_URL)
    assert extract_links(doc, PAGE_URL) == ["https://shop.example.com/x"]
    doc = parse_html("<title>caf\u00e9</title>".encode("utf-16"), PAGE_URL)
    assert extract_fields(doc, "", {"t": [Selector(css="title")]}) == {"t": "caf\u00e9"}


@pytest.mark.parametrize(
    ("body", "encoding", "title"),
    [
        (b"<title>caf\xe9</title>", "latin-1", "caf\u00e9"),
        (b"<title>caf\xc3\xa9</title>", "UTF-8", "caf\u00e9"),
        (b"<meta charset='latin-1'><title>caf\xe9</title>", None, "caf\u00e9"),
        # The HTTP header wins over the page's own declaration.
        (b"<meta charset='latin-1'><title>caf\xc3\xa9</title>", "utf-8", "caf\u00e9"),
        (b"<title>caf\xc3\xa9</title>", "no-such-charset", "caf\u00e9"),
    ],
)
def test_parse_html_encodings(body: bytes, encoding: str | None, title: str) -> None:
    doc = parse_html(body, PAGE_URL, encoding)
    assert extract_fields(doc, "", {"t": [Selector(css="title")]}) == {"t": title}


@settings(max_examples=200, deadline=None)
@given(
    st.binary(max_size=300)
    | st.text(alphabet="<>/a= href'\"#:x\x00é", max_size=200).map(str.encode)
)
def test_arbitrary_bytes_never_raise(body: bytes) -> None:
    extract_links(parse_html(body, PAGE_URL), PAGE_URL)


def test_content_checksum() -> None:
    assert content_checksum(b"abc") == hashlib.blake2b(b"abc", digest_size=16).hexdigest()
    assert len(content_checksum(b"")) == 32
