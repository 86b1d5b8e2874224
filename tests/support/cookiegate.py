"""A section of the synthetic web that needs the cookies it sets, on any host:

  GET /jar/            the start page: Set-Cookie consent=..., links to /jar/gate
  GET /jar/gate        403 without the consent cookie; without an `acw_tc`
                       cookie a 302 to itself that sets one (a client that
                       does not send it back loops); with both, links to
                       /jar/p/0 .. /jar/p/N-1
  GET /jar/p/N         page N: 403 without both cookies

Every link keeps the query string of the page it is on, so two jobs can
crawl one host apart (`/jar/?j=a`, `/jar/?j=b`). Each cookie value is made
for one host and one query (`issued`) and only counts there: a cookie sent
to another host or under another query is a leak, refused like none.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass

from aiohttp import web

from nadird.testing.web import SyntheticWeb

PREFIX = "/jar"
CONSENT = "consent"
ANTIBOT = "acw_tc"


@dataclass(frozen=True)
class Issued:
    name: str
    host: str
    query: str


class CookieGate:
    def __init__(self, pages: int = 4) -> None:
        self.pages = pages
        self.issued: dict[str, Issued] = {}  # cookie value -> what it was made for
        self._lock = threading.Lock()  # the test thread reads while the server writes

    def install(self, server: SyntheticWeb) -> None:
        server.add_route(PREFIX, self.route)

    def issued_for(self, value: str) -> Issued | None:
        with self._lock:
            return self.issued.get(value)

    async def route(self, request: web.Request, host: str) -> web.StreamResponse:
        path, query = request.path, request.query_string
        if path in (PREFIX, f"{PREFIX}/"):
            response = _page(f'<a href="{self._link("gate", query)}">enter</a>')
            self._set(response, CONSENT, host, query)
            return response
        if not self._valid(request, CONSENT, host, query):
            return web.Response(status=403, text="no consent\n")
        if path == f"{PREFIX}/gate":
            if not self._valid(request, ANTIBOT, host, query):
                response = web.Response(status=302, headers={"Location": request.path_qs})
                self._set(response, ANTIBOT, host, query)
                return response
            links = "".join(
                f'<a href="{self._link(f"p/{n}", query)}">page {n}</a>' for n in range(self.pages)
            )
            return _page(links)
        if path.startswith(f"{PREFIX}/p/") and self._valid(request, ANTIBOT, host, query):
            number = path.rsplit("/", 1)[1]
            return _page(f"<h1 class=title>jar page {number}</h1>")
        return web.Response(status=403, text="no cookie\n")

    def _set(self, response: web.Response, name: str, host: str, query: str) -> None:
        value = secrets.token_hex(8)
        with self._lock:
            self.issued[value] = Issued(name, host, query)
        response.set_cookie(name, value, path="/", httponly=True)

    def _valid(self, request: web.Request, name: str, host: str, query: str) -> bool:
        value = request.cookies.get(name, "")
        return self.issued_for(value) == Issued(name, host, query)

    @staticmethod
    def _link(path: str, query: str) -> str:
        return f"{PREFIX}/{path}" + (f"?{query}" if query else "")


def _page(body: str) -> web.Response:
    return web.Response(text=f"<html><body>{body}</body></html>", content_type="text/html")
