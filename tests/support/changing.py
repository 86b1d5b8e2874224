"""Pages that change while a crawl runs, for revisit tests.

A `ChangingPages` is a route of the synthetic web (`web.add_route(PREFIX,
pages.handle)`): each page has a title, a price and links that a test sets,
and a version that goes up when it does. A page answers with an ETag (its
version) and a Last-Modified (when the version changed), and honours
If-None-Match and If-Modified-Since with a 304. With `noise`, every answer
carries the time of the request outside the fields (what a clock or a
"generated at" line does), and with `validators=False` no ETag and no
Last-Modified are sent, so every answer is a full 200.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from email.utils import formatdate, parsedate_to_datetime

from aiohttp import web

PREFIX = "/shop/"


@dataclass
class Page:
    title: str
    price: int
    links: list[str] = field(default_factory=list)
    version: int = 1
    changed_at: float = field(default_factory=time.time)


class ChangingPages:
    def __init__(self, noise: bool = False, validators: bool = True) -> None:
        self.pages: dict[str, Page] = {}
        self.noise = noise
        self.validators = validators
        self.not_modified = 0  # 304s answered
        self._lock = threading.Lock()  # tests set pages from another thread

    def set(self, path: str, title: str, price: int, links: list[str] | None = None) -> None:
        with self._lock:
            old = self.pages.get(path)
            version = 1 if old is None else old.version + 1
            kept = old.links if old is not None and links is None else (links or [])
            self.pages[path] = Page(title, price, kept, version, time.time())

    def _html(self, page: Page) -> str:
        links = "".join(f'<a href="{href}">{href}</a>' for href in page.links)
        clock = f'<p class="clock">generated {time.time():.6f}</p>' if self.noise else ""
        return (
            f"<html><head><title>{page.title}</title></head><body>"
            f'<h1 class="title">{page.title}</h1><span class="price">{page.price}</span>'
            f"{clock}{links}</body></html>"
        )

    async def handle(self, request: web.Request, host: str) -> web.StreamResponse:
        with self._lock:
            page = self.pages.get(request.path)
        if page is None:
            return web.Response(status=404, text="not found")
        headers = {}
        if self.validators:
            etag = f'"v{page.version}"'
            headers = {"ETag": etag, "Last-Modified": formatdate(page.changed_at, usegmt=True)}
            if self._fresh(request, etag, page):
                self.not_modified += 1
                return web.Response(status=304, headers=headers)
        return web.Response(text=self._html(page), content_type="text/html", headers=headers)

    @staticmethod
    def _fresh(request: web.Request, etag: str, page: Page) -> bool:
        match = request.headers.get("If-None-Match")
        if match is not None:
            return match == etag
        since = request.headers.get("If-Modified-Since")
        if since is None:
            return False
        try:
            return int(page.changed_at) <= parsedate_to_datetime(since).timestamp()
        except (TypeError, ValueError):
            return False
