"""What a page says about itself (robots meta, canonical), spider traps and
sitemaps — on documents, without a crawl."""

from __future__ import annotations

import gzip

import lxml.html
import pytest
from support.hostile import Page, html_page, sitemap_index, sitemap_xml
from support.hostile_helpers import fetch_config, fetcher, hostile_web, url

from nadird.common.urls import fingerprint
from nadird.config import SitemapConfig, TrapConfig
from nadird.job.spec import Job, LinkRules, Selector
from nadird.worker.fetch.sitemaps import SitemapReader, parse_sitemap
from nadird.worker.follow.filter import DomainCounts, LinkPipeline, TrapGuard
from nadird.worker.pages import PageProcessor, PageTask
from nadird.worker.parse.directives import canonical_link, robots_directives


def doc(head: str) -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring(f"<html><head>{head}</head><body><p>x</p></body></html>")


@pytest.mark.parametrize(
    ("head", "header", "noindex", "nofollow"),
    [
        ('<meta name="robots" content="noindex, nofollow">', None, True, True),
        ('<meta name="ROBOTS" content="NOFOLLOW">', None, False, True),
        ('<meta name="robots" content="none">', None, True, True),
        ('<meta name="nadird" content="noindex">', None, True, False),
        ('<meta name="otherbot" content="noindex">', None, False, False),
        ("", "noindex", True, False),
        ("", "otherbot: noindex, nofollow", False, False),
        ("", "nadird: nofollow", False, True),
        ("", "unavailable_after: 25 Jun 2010 15:00:00 PST", False, False),
        ('<meta name="robots" content="index, follow">', None, False, False),
    ],
)
def test_robots_directives(head: str, header: str | None, noindex: bool, nofollow: bool) -> None:
    found = robots_directives(doc(head), header, "nadird")
    assert (found.noindex, found.nofollow) == (noindex, nofollow)


def test_canonical_link_resolves_against_base() -> None:
    page = "http://a.test/x/y?utm_source=z"
    assert canonical_link(doc('<link rel="canonical" href="/p?b=1&a=2">'), page) == (
        "http://a.test/p?a=2&b=1"
    )
    based = doc('<base href="http://b.test/dir/"><link rel="Canonical" href="c">')
    assert canonical_link(based, page) == "http://b.test/dir/c"
    assert canonical_link(doc('<link rel="canonical" href="javascript:x">'), page) is None
    assert canonical_link(doc('<link rel="alternate" href="/p">'), page) is None
    assert canonical_link(None, page) is None


@pytest.mark.parametrize(
    ("url_", "allowed"),
    [
        ("http://a.test/a/b/c", True),
        ("http://a.test/" + "/".join(f"s{i}" for i in range(7)), False),  # deeper than 6
        ("http://a.test/cal/2024/cal/2024/cal/2024", True),  # 3 repeats: the limit
        ("http://a.test/cal/2024/cal/2024/cal/2024/cal", False),
        ("http://a.test/?" + "q=" + "x" * 300, False),  # longer than 200
    ],
)
def test_trap_guard(url_: str, allowed: bool) -> None:
    guard = TrapGuard(TrapConfig(max_url_length=200, max_path_depth=6, max_segment_repeats=3))
    assert guard.allows(url_) is allowed


def test_link_pipeline_strips_dedupes_and_caps_per_domain() -> None:
    counts = DomainCounts()
    job = Job(links=LinkRules(scope="any"), max_pages_per_domain=2)
    pipeline = LinkPipeline(job, fetch_config(), counts)
    links = ["http://a.test/p?utm_source=1", "http://a.test/p", "http://b.test/q?gclid=3"]
    assert pipeline.follow(links, "http://a.test/") == ["http://a.test/p", "http://b.test/q"]
    counts.add("default", "b.test")
    counts.add("default", "b.test")  # this worker alone fetched the cap: b.test is full
    assert pipeline.follow(links, "http://a.test/") == ["http://a.test/p"]
    own = LinkPipeline(Job(strip_params=["id"]), fetch_config(), counts)
    assert own.follow(["http://a.test/p?id=1&utm_source=2"], "http://a.test/") == [
        "http://a.test/p?utm_source=2"
    ]


def test_parse_sitemaps_and_indexes_safely() -> None:
    assert parse_sitemap(sitemap_xml(["http://a.test/1", "http://a.test/2"])) == (
        "urlset",
        ["http://a.test/1", "http://a.test/2"],
    )
    assert parse_sitemap(sitemap_index(["http://a.test/s.xml"])) == (
        "sitemapindex",
        ["http://a.test/s.xml"],
    )
    assert parse_sitemap(b"<html>not a sitemap</html>") == ("", [])
    assert parse_sitemap(b"\x00\xff garbage") == ("", [])
    xxe = (
        b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<url><loc>http://a.test/&x;</loc></url></urlset>"
    )
    kind, locs = parse_sitemap(xxe)
    assert kind == "urlset" and not any("root:" in loc for loc in locs)


async def test_sitemap_reader_follows_indexes_and_gzip_within_bounds() -> None:
    with hostile_web() as (web, hostile):
        host = "s.test"
        urls = [url(web, host, f"/p/{i}") for i in range(30)]
        hostile.add_page(
            host,
            "/sitemap.xml",
            Page(
                sitemap_index([url(web, host, "/sm/a.xml.gz"), url(web, host, "/sm/nested.xml")]),
                content_type="application/xml",
            ),
        )
        hostile.add_page(
            host,
            "/sm/a.xml.gz",
            Page(gzip.compress(sitemap_xml(urls[:20])), content_type="application/gzip"),
        )
        hostile.add_page(
            host,
            "/sm/nested.xml",
            Page(sitemap_index([url(web, host, "/sm/b.xml")]), content_type="application/xml"),
        )
        hostile.add_page(
            host, "/sm/b.xml", Page(sitemap_xml(urls[20:]), content_type="application/xml")
        )

        async def pace() -> None:
            return None

        async with fetcher() as client:
            origin = url(web, host, "")
            reader = SitemapReader(client, SitemapConfig(), ttl=60.0)
            assert reader.claim(origin) and not reader.claim(origin)
            reader.release(origin)  # the result that carried them was dropped
            assert reader.claim(origin) and not reader.claim(origin)
            found = await reader.urls(origin, [], pace)
            shallow = SitemapReader(client, SitemapConfig(max_depth=1, max_urls=25), ttl=60.0)
            bounded = await shallow.urls(origin, [], pace)
            by_file = await reader.by_sitemap(origin, [], pace)
    assert sorted(found) == sorted(urls)
    # Each page URL with the sitemap that listed it (the archive's `via`).
    assert dict(by_file) == {
        url(web, host, "/sm/a.xml.gz"): urls[:20],
        url(web, host, "/sm/b.xml"): urls[20:],
    }
    assert bounded == urls[:20]  # b.xml sits two index levels down


async def test_a_page_with_another_canonical_defers_to_it() -> None:
    with hostile_web() as (web, hostile):
        host = "c.test"
        canonical = url(web, host, "/item")
        head = f'<link rel="canonical" href="{canonical}?utm_source=feed">'
        hostile.add_page(host, "/item", Page(html_page("item", ["/a"])))
        hostile.add_page(host, "/item-print", Page(html_page("print", ["/b"], head=head)))
        hostile.add_page(
            host,
            "/off",
            Page(
                html_page(
                    "off", ["/c"], head=head.replace(canonical, "http://elsewhere.example/item")
                )
            ),
        )
        cfg = fetch_config()
        job = Job(fields={"title": [Selector(xpath="//title/text()")]})
        async with fetcher() as client:
            processor = PageProcessor(client, job, cfg, LinkPipeline(job, cfg, DomainCounts()))
            results = {}
            for path in ("/item", "/item-print", "/off"):
                task = PageTask(url(web, host, path), fingerprint(url(web, host, path)), 0)
                results[path] = (await processor.process(task)).result
    item, dup, off = results["/item"], results["/item-print"], results["/off"]
    assert item is not None and dup is not None and off is not None
    assert item.canonical is None and item.data == {"title": "item"}
    assert dup.canonical == canonical and dup.data == {} and dup.links == [canonical]
    assert dup.body is None
    # Out of scope: recorded, but the page is its own item.
    assert off.canonical == "http://elsewhere.example/item" and off.data == {"title": "off"}
    assert off.links == [url(web, host, "/c")]


async def test_selected_response_headers_are_kept_with_the_page() -> None:
    host = "h.test"
    headers = {
        "ETag": '"v42"',
        "Last-Modified": "Sun, 29 Nov 2026 10:00:00 GMT",
        "Set-Cookie": "session=secret",  # not selected: never stored
        "X-Big": "x" * 5000,
    }
    with hostile_web() as (web, hostile):
        hostile.add_host(host)
        hostile.add_page(host, "/p", Page(html_page("p", []), headers=headers))
        cfg = fetch_config(store_headers=["etag", "Last-Modified", "x-big", "expires"])
        job = Job()
        async with fetcher(store_headers=cfg.store_headers) as client:
            processor = PageProcessor(client, job, cfg, LinkPipeline(job, cfg, DomainCounts()))
            target = url(web, host, "/p")
            result = (await processor.process(PageTask(target, fingerprint(target), 0))).result
    assert result is not None
    assert result.headers == {
        "etag": '"v42"',
        "last-modified": "Sun, 29 Nov 2026 10:00:00 GMT",
        "x-big": "x" * 1024,  # cut: a header cannot fill the store
    }


def test_store_headers_must_be_header_names() -> None:
    with pytest.raises(ValueError, match=r"store_headers\[1\]: not a header name: 'bad name'"):
        fetch_config(store_headers=["etag", "bad name"])
