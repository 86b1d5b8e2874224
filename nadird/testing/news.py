"""A living news web: sites that publish articles on a clock, for measuring
how soon a crawler has each new article (scripts/bench_news.py, tests).

`NewsWeb(sites, clock=ScaledClock(scale))` serves each NewsSite on its host
of a SyntheticWeb it is installed on (whose access log says what was
fetched, and when). Article i of a site appears at virtual time
`site.appears(i)`: every `period` seconds from a seeded phase; the first
`backlog` ones already exist at time 0. Each site is found another way
(`how`):

  rss | atom | json | rdf   the home page announces its feed
                            (<link rel=alternate>); /feed.xml lists the newest
  news-sitemap              robots.txt lists /news-sitemap.xml (Google News:
                            publication date and title per entry)
  home                      only the home page lists the newest articles

and every site carries noise: /archive?page=N and /tag/<t>?page=N list older
articles, 10 a page, each with a "next" link, without end.

  /                 the newest HOME_COUNT articles, tags, the archive
  /articles/N       article N (404 before it appears), dated in JSON-LD
  /feed.xml /news-sitemap.xml   the newest FEED_COUNT entries

Dates are wall-clock: virtual time t is `origin + t / scale` (the clock's
creation), so the dates a feed states are the real publication times.
Feeds, sitemaps and home pages answer If-None-Match with 304 until the
next article appears.
"""

from __future__ import annotations

import email.utils
import html
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from aiohttp import web

from nadird.testing.living import Clock, ScaledClock
from nadird.testing.web import SyntheticWeb

How = Literal["rss", "atom", "json", "rdf", "news-sitemap", "home"]
HOWS: tuple[How, ...] = ("rss", "atom", "json", "news-sitemap", "home", "rdf")
HOME_COUNT = 10
FEED_COUNT = 20
PAGE_SIZE = 10
TAGS = ("world", "business", "sport")
FEED_TYPES = {
    "rss": "application/rss+xml",
    "atom": "application/atom+xml",
    "json": "application/feed+json",
    "rdf": "application/rdf+xml",
}


@dataclass(frozen=True)
class NewsSite:
    host: str
    how: How
    period: float  # virtual seconds between two articles
    backlog: int = 30  # articles already there at time 0
    phase: float = 0.0  # virtual time of the first new article, in [0, period)

    def appears(self, i: int) -> float:
        """Virtual time article i appears (negative: before time 0)."""
        return self.phase + (i - self.backlog) * self.period

    def count(self, t: float) -> int:
        """Articles out at virtual time t."""
        if t < self.phase:
            return self.backlog
        return self.backlog + 1 + int((t - self.phase) // self.period)


def news_sites(
    count: int, periods: tuple[float, float] = (4.0, 25.0), seed: int = 0, backlog: int = 30
) -> list[NewsSite]:
    """`count` sites, each found its own way in turn, publishing every
    periods[0]..periods[1] seconds (seeded)."""
    rng = random.Random(seed)
    sites = []
    for k in range(count):
        period = rng.uniform(*periods)
        how = HOWS[k % len(HOWS)]
        sites.append(NewsSite(f"news-{k}.test", how, period, backlog, rng.uniform(0, period)))
    return sites


@dataclass
class NewsWeb:
    sites: list[NewsSite]
    clock: Clock = field(default_factory=ScaledClock)
    scale: float = 1.0  # virtual seconds per wall second (the clock's)
    origin: float = field(default_factory=time.time)  # wall time of virtual 0
    port: int = 0

    def __post_init__(self) -> None:
        self._by_host = {site.host: site for site in self.sites}

    def install(self, server: SyntheticWeb) -> NewsWeb:
        server.add_route("/", self.handle)
        self._server = server
        return self

    # ------------------------------------------------------------ the truth

    def wall(self, t: float) -> float:
        """The wall time of virtual time t."""
        return self.origin + t / self.scale

    def article_url(self, site: NewsSite, i: int) -> str:
        return f"http://{site.host}:{self._server.port}/articles/{i}"

    def seeds(self) -> list[str]:
        return [f"http://{site.host}:{self._server.port}/" for site in self.sites]

    def published(self, since: float, until: float) -> list[tuple[NewsSite, int, float]]:
        """(site, article, wall time) of the articles that appeared in [since, until) (wall)."""
        out = []
        for site in self.sites:
            for i in range(site.count(self._virtual(since)), site.count(self._virtual(until))):
                out.append((site, i, self.wall(site.appears(i))))
        return out

    def _virtual(self, wall: float) -> float:
        return (wall - self.origin) * self.scale

    # ------------------------------------------------------------- serving

    async def handle(self, request: web.Request, host: str) -> web.StreamResponse:
        site = self._by_host.get(host)
        if site is None:
            return web.Response(status=404, text="no such site\n")
        count = site.count(self.clock.now())
        path = request.path
        if path == "/robots.txt":
            return web.Response(text=self._robots(site), content_type="text/plain")
        if path.startswith("/articles/"):
            return self._article(site, path[len("/articles/") :], count)
        if path in ("/archive", "/tag/world", "/tag/business", "/tag/sport"):
            page = _page_number(request.query.get("page", "1"))
            return _html(_listing(site, path, page, count))
        if path == "/":
            return self._fresh(request, site, count, "text/html", lambda: _home(site, count))
        if path == "/feed.xml" and site.how in FEED_TYPES:
            kind = FEED_TYPES[site.how]
            return self._fresh(request, site, count, kind, lambda: self._feed(site, count))
        if path == "/news-sitemap.xml" and site.how == "news-sitemap":
            kind = "application/xml"
            return self._fresh(request, site, count, kind, lambda: self._sitemap(site, count))
        return web.Response(status=404, text="404: Not Found\n")

    def _fresh(
        self, request: web.Request, site: NewsSite, count: int, kind: str, body: Callable[[], str]
    ) -> web.Response:
        """A listing that changes when an article appears: 304 while it has not."""
        etag = f'"{site.host}-{count}"'
        last = email.utils.formatdate(self.wall(site.appears(count - 1)), usegmt=True)
        headers = {"ETag": etag, "Last-Modified": last}
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers=headers)
        return web.Response(text=body(), content_type=kind, charset="utf-8", headers=headers)

    def _robots(self, site: NewsSite) -> str:
        text = "User-agent: *\nAllow: /\n"
        if site.how == "news-sitemap":
            text += f"Sitemap: http://{site.host}:{self._server.port}/news-sitemap.xml\n"
        return text

    def _article(self, site: NewsSite, tail: str, count: int) -> web.Response:
        if not tail.isdigit() or int(tail) >= count:
            return web.Response(status=404, text="404: Not Found\n")
        i = int(tail)
        date = self._iso(site, i)
        body = (
            f"<html><head><title>{_title(site, i)}</title>"
            f'<link rel="canonical" href="{self.article_url(site, i)}">'
            '<script type="application/ld+json">'
            f'{{"@type": "NewsArticle", "headline": "{_title(site, i)}",'
            f' "datePublished": "{date}"}}</script></head><body>'
            f"<h1>{_title(site, i)}</h1><time datetime='{date}'>{date}</time>"
            f"<p>Text of article {i} of {site.host}.</p>"
            f'<a href="/">home</a> <a href="/tag/{TAGS[i % 3]}">{TAGS[i % 3]}</a></body></html>'
        )
        return _html(body)

    def _iso(self, site: NewsSite, i: int) -> str:
        return datetime.fromtimestamp(self.wall(site.appears(i)), UTC).isoformat()

    def _newest(self, count: int) -> range:
        return range(count - 1, max(count - 1 - FEED_COUNT, -1), -1)

    def _feed(self, site: NewsSite, count: int) -> str:
        base = f"http://{site.host}:{self._server.port}"
        if site.how == "json":
            return _json_feed(self, site, count, base)
        items = []
        for i in self._newest(count):
            url, title = self.article_url(site, i), _title(site, i)
            when = self.wall(site.appears(i))
            if site.how == "atom":
                items.append(
                    f'<entry><title>{title}</title><link rel="alternate" href="{url}"/>'
                    f"<id>{url}</id><published>{self._iso(site, i)}</published>"
                    f"<updated>{self._iso(site, i)}</updated></entry>"
                )
            elif site.how == "rdf":
                items.append(
                    f'<item rdf:about="{url}"><title>{title}</title><link>{url}</link>'
                    f"<dc:date>{self._iso(site, i)}</dc:date></item>"
                )
            else:
                date = email.utils.formatdate(when, usegmt=True)
                items.append(
                    f"<item><title>{title}</title><link>{url}</link><guid>{url}</guid>"
                    f"<pubDate>{date}</pubDate></item>"
                )
        return _feed_document(site.how, base, "".join(items))

    def _sitemap(self, site: NewsSite, count: int) -> str:
        entries = "".join(
            f"<url><loc>{self.article_url(site, i)}</loc><news:news><news:publication>"
            f"<news:name>{site.host}</news:name><news:language>en</news:language>"
            f"</news:publication><news:publication_date>{self._iso(site, i)}"
            f"</news:publication_date><news:title>{_title(site, i)}</news:title>"
            "</news:news></url>"
            for i in self._newest(count)
        )
        return (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
            'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">'
            f"{entries}</urlset>"
        )


def _title(site: NewsSite, i: int) -> str:
    return f"Story {i} from {site.host}"


def _html(body: str) -> web.Response:
    return web.Response(text=body, content_type="text/html", charset="utf-8")


def _page_number(text: str) -> int:
    return int(text) if text.isdigit() and 0 < int(text) < 10**6 else 1


def _home(site: NewsSite, count: int) -> str:
    alternate = ""
    if site.how in FEED_TYPES:
        kind = FEED_TYPES[site.how]
        alternate = f'<link rel="alternate" type="{kind}" title="News" href="/feed.xml">'
    newest = range(count - 1, max(count - 1 - HOME_COUNT, -1), -1)
    articles = "".join(f'<li><a href="/articles/{i}">{_title(site, i)}</a></li>' for i in newest)
    tags = "".join(f'<a href="/tag/{t}">{t}</a> ' for t in TAGS)
    return (
        f"<html><head><title>{site.host}</title>{alternate}</head><body>"
        f'<ul>{articles}</ul><nav>{tags}<a href="/archive">archive</a></nav></body></html>'
    )


def _listing(site: NewsSite, path: str, page: int, count: int) -> str:
    """Older articles, PAGE_SIZE a page, a next link on every page (no end)."""
    start = count - 1 - HOME_COUNT - (page - 1) * PAGE_SIZE
    shown = [i for i in range(start, start - PAGE_SIZE, -1) if i >= 0]
    items = "".join(f'<li><a href="/articles/{i}">{_title(site, i)}</a></li>' for i in shown)
    return (
        f"<html><head><title>{html.escape(path)} page {page}</title>"
        f'<link rel="next" href="{path}?page={page + 1}"></head><body><ul>{items}</ul>'
        f'<a rel="next" href="{path}?page={page + 1}">next</a></body></html>'
    )


def _feed_document(how: str, base: str, items: str) -> str:
    head = '<?xml version="1.0" encoding="UTF-8"?>'
    if how == "atom":
        return (
            f'{head}<feed xmlns="http://www.w3.org/2005/Atom"><title>News</title>'
            f'<link href="{base}/"/><id>{base}/</id>{items}</feed>'
        )
    if how == "rdf":
        return (
            f'{head}<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
            'xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">'
            f"<channel><title>News</title><link>{base}/</link></channel>{items}</rdf:RDF>"
        )
    return (
        f'{head}<rss version="2.0"><channel><title>News</title><link>{base}/</link>'
        f"{items}</channel></rss>"
    )


def _json_feed(news: NewsWeb, site: NewsSite, count: int, base: str) -> str:
    items = [
        {
            "id": news.article_url(site, i),
            "url": news.article_url(site, i),
            "title": _title(site, i),
            "date_published": news._iso(site, i),
        }
        for i in news._newest(count)
    ]
    version = "https://jsonfeed.org/version/1.1"
    feed = {"version": version, "title": "News", "home_page_url": f"{base}/", "items": items}
    return json.dumps(feed)
