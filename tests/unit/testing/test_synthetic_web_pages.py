"""The synthetic web's pages: links in varied forms, expected fields, filler."""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit, urlunsplit

import lxml.html
from support.synthetic_web_helpers import PORT, small_graph, split

from nadird.testing.graph import SiteGraph


def normalise(url: str) -> str:
    """Lower-case host, no fragment, no default port: what a crawler should do."""
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port not in (None, 80):
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


def hrefs(graph: SiteGraph, url: str) -> list[str]:
    page = graph.html(*split(url))
    assert page is not None
    found = lxml.html.fromstring(page).xpath("//a/@href")
    assert isinstance(found, list)
    return [str(href) for href in found]


def test_out_links_are_the_parsed_links_made_canonical() -> None:
    for port in (PORT, 80):
        graph = small_graph(port=port)
        for url in graph.all_pages():
            parsed = [normalise(urljoin(url, href)) for href in hrefs(graph, url)]
            assert parsed == graph.out_links(url), url


def test_links_come_in_varied_forms() -> None:
    graph = small_graph()
    written = [href for url in graph.all_pages() for href in hrefs(graph, url)]
    assert any(href.startswith("/p/") for href in written)
    assert any(href.startswith("../") for href in written)
    assert any(href[0].isdigit() for href in written)  # "3" from /p/5
    assert any(href.startswith("//") for href in written)
    assert any(href.startswith("http://SITE-") for href in written)
    assert any(href.startswith(f"http://site-1.test:{PORT}/") for href in written)
    assert any("#" in href for href in written)


def test_expected_fields_are_in_the_html() -> None:
    graph = small_graph()
    url = f"http://site-2.test:{PORT}/p/5"
    page = graph.html(*split(url))
    assert page is not None
    doc = lxml.html.fromstring(page)
    fields = graph.expected_fields(url)
    assert fields["h1"] == "Page site-2.test /p/5"
    assert fields["title"] == doc.findtext(".//title")
    assert fields["h1"] == doc.findtext(".//h1")
    assert fields["price"] == doc.cssselect("span.price")[0].text
    assert fields["price"].startswith("$")
    assert fields["sku"] == doc.cssselect('meta[name="sku"]')[0].get("content")


def test_filler_pads_pages_without_changing_them() -> None:
    plain, padded = small_graph(), small_graph(filler_kb=60)
    url = f"http://site-0.test:{PORT}/p/3"
    page = padded.html(*split(url))
    assert page is not None
    assert len(page) >= 60 * 1024
    assert padded.expected_fields(url) == plain.expected_fields(url)
    assert padded.out_links(url) == plain.out_links(url)
