"""Feeds and sitemaps read as what they are (worker/parse/feeds.py), and what
a hostile or broken one gets: a counted reason, bounded work, nothing resolved."""

from __future__ import annotations

import gzip
import json
import time

import pytest

from nadird.worker.parse.feeds import NotAFeed, read_document, sniff

SITE = "http://news.test"
RSS = f"""<?xml version="1.0"?><rss version="2.0"><channel><title>N</title>
<item><title> First </title><link>{SITE}/a/1</link>
<pubDate>Tue, 01 Dec 2026 10:00:00 GMT</pubDate></item>
<item><title>No date</title><link>{SITE}/a/2</link></item>
<item><title>Odd date</title><link>{SITE}/a/3</link>
<pubDate>the day after tomorrow-ish</pubDate></item>
<item><title>No link</title></item>
</channel></rss>""".encode()
ATOM = b"""<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>N</title>
<entry><title>A</title><link rel="alternate" href="/a/9"/><id>x</id>
<published>2026-12-01T18:00:00+08:00</published><updated>2026-12-01T11:00:00Z</updated></entry>
</feed>"""
RDF = f"""<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
 xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel><title>N</title></channel>
<item rdf:about="{SITE}/a/4"><title>R</title><link>{SITE}/a/4</link>
<dc:date>2026-12-01T10:00:00Z</dc:date></item>
</rdf:RDF>""".encode()
JSON_FEED = json.dumps(
    {
        "version": "https://jsonfeed.org/version/1.1",
        "title": "N",
        "items": [
            {
                "id": "5",
                "url": f"{SITE}/a/5",
                "title": "J",
                "date_published": "2026-12-01T10:00:00Z",
            }
        ],
    }
).encode()
NEWS_SITEMAP = f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
<url><loc>{SITE}/a/6</loc><news:news><news:publication><news:name>N</news:name><news:language>en</news:language></news:publication>
<news:publication_date>2026-12-01</news:publication_date><news:title>Six</news:title></news:news></url>
<url><loc>{SITE}/a/7</loc><lastmod>2026-12-01T09:00:00Z</lastmod></url>
</urlset>""".encode()
INDEX = f"""<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>{SITE}/sitemap-1.xml</loc></sitemap><sitemap><loc>{SITE}/sitemap-index.xml</loc></sitemap>
</sitemapindex>""".encode()


def test_each_kind_gives_its_entries_with_what_they_state() -> None:
    rss = read_document(RSS, 100)
    assert rss.kind == "rss" and [e.url for e in rss.entries] == [
        f"{SITE}/a/{i}" for i in (1, 2, 3)
    ]
    first = rss.entries[0]
    assert (first.title, first.published) == ("First", "2026-12-01T10:00:00+00:00")
    assert rss.entries[1].published is None  # none stated: nothing made up
    assert rss.no_url == 1
    atom = read_document(ATOM, 100)
    assert atom.kind == "atom" and atom.entries[0].url == "/a/9"  # resolved by the page
    assert atom.entries[0].published == "2026-12-01T10:00:00+00:00"  # +08:00 read as such
    assert atom.entries[0].updated == "2026-12-01T11:00:00+00:00"
    rdf = read_document(RDF, 100)
    assert (rdf.kind, rdf.entries[0].url, rdf.entries[0].title) == ("rdf", f"{SITE}/a/4", "R")
    feed = read_document(JSON_FEED, 100)
    assert feed.kind == "json" and feed.entries[0].published == "2026-12-01T10:00:00+00:00"
    news = read_document(NEWS_SITEMAP, 100)
    assert news.kind == "urlset"
    assert news.entries[0].title == "Six" and news.entries[0].published.startswith("2026-12-01")
    assert news.entries[1].updated == "2026-12-01T09:00:00+00:00"
    index = read_document(INDEX, 100)
    assert index.kind == "sitemapindex" and len(index.entries) == 2


def test_an_unreadable_date_is_counted_not_guessed() -> None:
    odd = RSS.replace(b"Tue, 01 Dec 2026 10:00:00 GMT", b"2026-13-45")
    read = read_document(
        NEWS_SITEMAP.replace(b"<news:publication_date>2026-12-01", b"<news:publication_date>soon"),
        100,
    )
    assert read.bad_date == 1 and read.entries[0].published is None
    assert read_document(odd, 100).entries[0].url == f"{SITE}/a/1"


@pytest.mark.parametrize(
    "body",
    [
        b"<html><head><title>502 Bad Gateway</title></head><body><h1>502</h1></body></html>",
        b"",
        b"not xml at all",
        b'{"items": []}',
    ],
)
def test_what_is_not_a_feed_is_refused(body: bytes) -> None:
    assert sniff(body) is None
    with pytest.raises(NotAFeed):
        read_document(body, 100)


def test_an_html_page_that_says_rss_is_refused_by_the_parser() -> None:
    body = b"<html><body><rss>oops</rss></body></html>"
    with pytest.raises(NotAFeed):
        read_document(body, 100)


def test_a_truncated_feed_gives_what_it_has() -> None:
    cut = RSS[: RSS.index(b"<item><title>Odd")]
    assert [e.url for e in read_document(cut, 100).entries] == [f"{SITE}/a/1", f"{SITE}/a/2"]


def test_billion_laughs_is_not_expanded() -> None:
    levels = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    bomb = (
        f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY l0 "lol">{levels}]>'
        f'<rss version="2.0"><channel><title>&l9;</title>'
        f"<item><title>&l9;</title><link>{SITE}/a/1</link></item></channel></rss>"
    ).encode()
    sitemap = bomb.replace(b"<rss", b"<urlset").replace(b"</rss>", b"</urlset>")
    started = time.process_time()
    # The parser refuses the amplification: the document gives nothing.
    assert read_document(bomb, 100).entries == []
    assert read_document(sitemap, 100).entries == []
    assert time.process_time() - started < 1.0


@pytest.mark.parametrize("root", ["rss", "urlset"])
def test_external_entities_are_never_resolved(root: str) -> None:
    inner = (
        f"<channel><item><title>&x;</title><link>{SITE}/a/&x;</link></item></channel>"
        if root == "rss"
        else f"<url><loc>{SITE}/a/&x;</loc></url>"
    )
    body = (
        '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/hostname">]>'
        f'<{root} version="2.0">{inner}</{root}>'
    ).encode()
    read = read_document(body, 100)
    # The entity is dropped, never replaced by the file's content.
    assert [(e.url, e.title) for e in read.entries] == [(f"{SITE}/a/", None)]


def test_a_feed_of_10000_entries_keeps_max_entries_and_counts_the_rest() -> None:
    items = "".join(f"<item><link>{SITE}/a/{i}</link></item>" for i in range(10_000))
    body = f'<rss version="2.0"><channel><title>N</title>{items}</channel></rss>'.encode()
    read = read_document(body, 1000)
    assert len(read.entries) == 1000 and read.over_limit == 9000
    assert read.summary()["over_limit"] == 9000


def test_a_gzipped_sitemap_is_sniffed_by_what_it_unpacks_to() -> None:
    assert sniff(NEWS_SITEMAP) == "sitemap"
    assert sniff(gzip.decompress(gzip.compress(NEWS_SITEMAP))) == "sitemap"
