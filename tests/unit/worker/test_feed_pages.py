"""A `feeds:` job's pages on a real loopback server (the living news web of
nadird.testing.news, plus a few broken feeds): feeds found from the home
page, entries sent as links with what they state, archive pages past
max_page left out, and a feed URL that answers with anything else counted
as a parse error, never followed as HTML."""

from __future__ import annotations

import gzip
from typing import Any
from xml.sax.saxutils import escape

import pytest
from aiohttp import web
from support.hostile_helpers import fetch_config, fetcher

from nadird.common.errors import ErrorKind
from nadird.common.typecheck import build
from nadird.common.urls import fingerprint
from nadird.job.feeds import ARCHIVE_PENALTY, ARTICLE_BONUS, FEED_BONUS, FeedsSpec, news_rank
from nadird.job.spec import Job
from nadird.protocol.messages import PageResult
from nadird.testing.living import ManualClock
from nadird.testing.news import NewsSite, NewsWeb
from nadird.testing.web import SyntheticWeb, run_in_thread
from nadird.worker.feed_page import read_feed_page
from nadird.worker.follow.feedlinks import announced_feeds
from nadird.worker.follow.filter import DomainCounts, LinkPipeline
from nadird.worker.pages import PageProcessor, PageTask
from nadird.worker.parse.parser import parse_html

SITES = [NewsSite(f"{how}.test", how, 10.0, backlog=3) for how in ("rss", "atom", "json", "home")]
BROKEN = "broken.test"
ITEM = "<item><title>T</title><link>{0}</link></item>"


def _broken(port: int) -> dict[str, bytes]:
    """Feeds a worker must survive, by path."""
    article = f"http://{BROKEN}:{port}/articles/1"
    rss = '<rss version="2.0"><channel><title>N</title>{}</channel></rss>'
    return {
        "/feed.xml": b"<html><body><h1>502 Bad Gateway</h1></body></html>",
        "/rss.xml": rss.format(ITEM.format(article) + "<item><title>cut").encode()[:-3],
        # The same article under its feed URL (with tracking) and its canonical URL.
        "/atom.xml": rss.format(
            ITEM.format(article) + ITEM.format(article + "#top") + ITEM.format("/articles/1")
        ).encode(),
        # 3 MB: past the worker's fetch.max_body_bytes (1 MiB here).
        "/sitemap-huge.xml": (
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            + f"<url><loc>{article}</loc></url>" * 60_000
            + "</urlset>"
        ).encode(),
        "/sitemap.xml.gz": gzip.compress(
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<url><loc>{article}</loc></url></urlset>".encode()
        ),
    }


async def _process(job: Job, target: str) -> PageResult:
    cfg = fetch_config()
    async with fetcher() as client:
        processor = PageProcessor(client, job, cfg, LinkPipeline(job, cfg, DomainCounts()))
        result = (await processor.process(PageTask(target, fingerprint(target), 0))).result
    assert result is not None
    return result


@pytest.fixture
def news() -> Any:
    with run_in_thread() as server:
        news = NewsWeb(SITES, ManualClock(0.0)).install(server)
        bodies = _broken(server.port)
        routes = {BROKEN: bodies}

        async def handle(request: web.Request, host: str) -> web.StreamResponse:
            if host in routes:
                body = routes[host].get(request.path)
                if body is None:
                    return web.Response(status=404)
                return web.Response(body=body, content_type="application/xml")
            return await news.handle(request, host)

        server.add_route("/", handle)
        yield server, news


def _job(**feeds: Any) -> Job:
    return build(Job, {"feeds": feeds or True, "links": {"scope": "same-domain"}})


def _url(server: SyntheticWeb, host: str, path: str) -> str:
    return f"http://{host}:{server.port}{path}"


async def test_the_home_page_names_its_feed_and_the_feed_its_articles(news: Any) -> None:
    server, web_ = news
    for site in SITES[:3]:
        home = await _process(_job(), _url(server, site.host, "/"))
        assert home.links[0] == _url(server, site.host, "/feed.xml"), site.how
        feed = await _process(_job(), _url(server, site.host, "/feed.xml"))
        assert feed.error is None, feed.error
        assert feed.links == [web_.article_url(site, i) for i in (3, 2, 1, 0)]
        assert (
            feed.data["_feed"]["kind"] == {"rss": "rss", "atom": "atom", "json": "json"}[site.how]
        )
        entry = feed.data["entries"][0]
        assert entry["title"] == f"Story 3 from {site.host}" and entry["published"]


async def test_a_home_page_with_no_feed_gets_the_two_common_paths_once(news: Any) -> None:
    server, _ = news
    home = await _process(_job(), _url(server, "home.test", "/"))
    assert home.links[:2] == [_url(server, "home.test", p) for p in ("/feed", "/rss.xml")]
    article = await _process(_job(), _url(server, "home.test", "/articles/1"))
    assert not any(link.endswith(("/feed", "/rss.xml")) for link in article.links)


async def test_archive_pages_past_max_page_are_not_followed(news: Any) -> None:
    server, _ = news
    first = await _process(_job(max_page=1), _url(server, "rss.test", "/archive"))
    assert not any("page=" in link for link in first.links)
    second = await _process(_job(max_page=2), _url(server, "rss.test", "/archive"))
    assert _url(server, "rss.test", "/archive?page=2") in second.links


async def test_broken_feeds_are_counted_errors_or_give_what_they_have(news: Any) -> None:
    server, _ = news
    html = await _process(_job(), _url(server, BROKEN, "/feed.xml"))
    assert html.error_kind is ErrorKind.PARSE and "not a feed" in (html.error or "")
    assert html.links == []  # never followed as HTML
    cut = await _process(_job(), _url(server, BROKEN, "/rss.xml"))
    assert cut.links == [_url(server, BROKEN, "/articles/1")]
    # One article under three spellings: one link.
    dup = await _process(_job(), _url(server, BROKEN, "/atom.xml"))
    assert dup.links == [_url(server, BROKEN, "/articles/1")]
    packed = await _process(_job(), _url(server, BROKEN, "/sitemap.xml.gz"))
    assert packed.links == [_url(server, BROKEN, "/articles/1")]
    # A sitemap past the size bound is a counted error, never held whole.
    huge = await _process(_job(), _url(server, BROKEN, "/sitemap-huge.xml"))
    assert huge.error_kind is ErrorKind.TOO_LARGE and huge.links == []


def test_feeds_first_then_articles_then_listings_then_archives() -> None:
    site = "http://n.test"
    assert news_rank(f"{site}/feed.xml", False) == FEED_BONUS
    assert news_rank(f"{site}/articles/4", False) == ARTICLE_BONUS
    assert news_rank(f"{site}/tag/world", True) == 0
    assert news_rank(f"{site}/tag/world?page=2", True) == ARCHIVE_PENALTY
    assert FEED_BONUS > ARTICLE_BONUS > 0 > ARCHIVE_PENALTY


def test_entries_resolve_as_a_pages_links_do_and_unusable_ones_are_counted() -> None:
    """Each entry's URL is what urljoin against the feed's URL, then
    canonicalize, make of it (the fast paths skip urljoin, not its result);
    one with no http(s) URL is counted in `no_url`, not sent."""
    feed_url = "http://n.test/news/feed.xml"
    hrefs = {
        "http://N.test/a/../2026/1?b=2&a=1#top": "http://n.test/2026/1?a=1&b=2",
        "/2026/2": "http://n.test/2026/2",
        "2026/3": "http://n.test/news/2026/3",
        "./2026/../4": "http://n.test/news/4",
        "//cdn.test/5": "http://cdn.test/5",
        "https://n.test:443/6": "https://n.test/6",
        "http://n.test/7\n8": "http://n.test/78",  # newlines dropped, as browsers do
    }
    unusable = ["mailto:desk@n.test", "http://[bad/9", "tag:n.test,2026:10"]
    items = "".join(ITEM.format(escape(h)) for h in [*hrefs, *unusable])
    body = f'<rss version="2.0"><channel><title>N</title>{items}</channel></rss>'.encode()
    job = build(Job, {"feeds": True, "links": {"scope": "any"}})
    assert isinstance(job.feeds, FeedsSpec)
    pipeline = LinkPipeline(job, fetch_config(), DomainCounts())
    page = read_feed_page(feed_url, body, job.feeds, pipeline, 1 << 20)
    entries = page.data["entries"]
    assert isinstance(entries, list)
    assert [e["url"] for e in entries] == list(hrefs.values())
    assert page.links == list(hrefs.values())
    summary = page.data["_feed"]
    assert isinstance(summary, dict) and summary["no_url"] == len(unusable)


def test_feeds_are_the_links_rel_alternate_of_a_feed_type_anywhere_in_the_page() -> None:
    html = (
        "<html><head>"
        "<link rel='alternate' type='application/rss+xml' href='/a.xml'>"
        "<link rel='ALTERNATE stylesheet' type='application/atom+xml; charset=utf-8' href='b'>"
        "<link rel='stylesheet' type='application/rss+xml' href='/not-alternate'>"
        "<link rel='alternate' type='text/html' href='/not-a-feed-type'>"
        "<link rel='Alternate' type='APPLICATION/FEED+JSON' href='//cdn.test/e.json'>"
        "</head><body>"
        "<link rel='alternate' type='application/rss+xml' href='/in-body.xml'>"
        "<link rel='xalternate' type='application/rss+xml' href='/not-the-word'>"
        "</body></html>"
    )
    doc = parse_html(html.encode(), "http://n.test/p/q.html")
    assert doc is not None
    assert announced_feeds(doc, "http://n.test/p/q.html") == [
        "http://n.test/a.xml",
        "http://n.test/p/b",
        "http://cdn.test/e.json",
        "http://n.test/in-body.xml",
    ]
