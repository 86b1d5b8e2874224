"""Article and non-article pages, as sites write them, and a web serving them.

Each page is a file beside this one: two articles (a news story with
JSON-LD, Open Graph, a cookie banner, navigation, related links, comments
and a footer; a blog post declaring the wrong language, with only Open
Graph and a <time>), a hub page of teasers, a product page and a login wall.
`PAGES` says where `route` serves each and what it is; `ARTICLE_TEXT`
holds sentences each article's text must keep, `NOT_TEXT` some it must not.
`BAD_PAGES` are bodies that must not break extraction: an undeclared GBK
article, a page with no <body>, 5,000 nested <div>s, binary bytes served as
text/html.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

FIXTURES = Path(__file__).resolve().parent
PREFIX = "/news/"  # where `route` serves everything


@dataclass(frozen=True)
class Page:
    file: str
    path: str  # where article_web serves it
    kind: str  # what `kind` must say


PAGES = [
    Page("news_article.html", f"{PREFIX}2026/03/14/harbour-tunnel-reopens", "article"),
    Page("blog_post.html", f"{PREFIX}blog/sourdough-at-altitude", "article"),
    Page("hub.html", f"{PREFIX}city/", "hub"),
    Page("product.html", f"{PREFIX}p/trailhead-45", "product"),
    Page("login.html", f"{PREFIX}login", "login"),
]
_BY_PATH = {page.path: page.file for page in PAGES}

ARTICLE_TEXT = {
    "news_article.html": [
        "The harbour tunnel carried its first cars in two years on Saturday morning",
        "Tolls will stay suspended until the end of April",
        "Length of lining replaced: 640 metres",
    ],
    "blog_post.html": [
        "When we moved to the mountains last spring",
        "Next month I will write about rye",
    ],
}
NOT_TEXT = [
    "We use cookies",  # the cookie banner
    "Related stories",
    "Bridge inspections find cracks",  # a related link
    "About time. The detour",  # a reader's comment
    "All rights reserved",  # the footer
    "Subscribe",  # the navigation
    "Popular posts",
]


def html_of(file: str) -> str:
    return (FIXTURES / file).read_text(encoding="utf-8")


async def route(request: web.Request, host: str) -> web.StreamResponse:
    """SyntheticWeb route for PREFIX: PAGES, BAD_PAGES, and a home page linking to all."""
    path = request.path
    if path == PREFIX:
        links = "".join(f'<li><a href="{p}">{p}</a></li>' for p in (*_BY_PATH, *BAD_PAGES))
        home = f"<!DOCTYPE html><html><head><title>Home</title></head><body><ul>{links}</ul>"
        return web.Response(text=home + "</body></html>", content_type="text/html")
    if path in _BY_PATH:
        return web.Response(text=html_of(_BY_PATH[path]), content_type="text/html")
    if path in BAD_PAGES:
        body, charset = BAD_PAGES[path]
        headers = {"Content-Type": "text/html" + (f"; charset={charset}" if charset else "")}
        return web.Response(body=body, headers=headers)
    return web.Response(status=404, text="404: Not Found\n")


def _gbk_article() -> bytes:
    """A Chinese article in GBK that declares no charset anywhere."""
    paragraph = "港口隧道在维修两年后于周六早上重新开放，维修比计划晚了一年，费用几乎是预算的两倍。"
    body = "".join(f"<p>{paragraph}第{i}段。</p>" for i in range(8))
    page = (
        "<html><head><title>港口隧道重新开放</title></head><body><nav><a href='/'>首页</a></nav>"
        f"<article><h1>港口隧道重新开放</h1>{body}</article></body></html>"
    )
    return page.encode("gbk")


def _deeply_nested() -> bytes:
    depth = 5000
    return ("<html><body>" + "<div>" * depth + "<p>deep</p>" + "</div>" * depth).encode()


# path: (body, the charset its Content-Type header names)
BAD_PAGES: dict[str, tuple[bytes, str | None]] = {
    f"{PREFIX}bad/gbk": (_gbk_article(), None),
    f"{PREFIX}bad/no-body": (b"<html><head><title>Only a head</title></head></html>", None),
    f"{PREFIX}bad/deep": (_deeply_nested(), None),
    f"{PREFIX}bad/binary": (bytes(range(256)) * 64, None),
}
