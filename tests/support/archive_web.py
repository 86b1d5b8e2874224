"""A corner of the synthetic web for the web archive's tests: answers sent
gzip-encoded, chunked, Brotli-encoded, a redirect, a 304 for a matching
If-None-Match and a page that never changes. `sent` keeps, per path, the
body bytes as they went on the wire (before chunking, after encoding), which
is what an archive must hold and a replay must give back."""

from __future__ import annotations

import gzip
import threading
from collections import Counter
from dataclasses import dataclass, field

from aiohttp import web

from nadird.testing.web import SyntheticWeb

try:
    import brotli
except ImportError:  # the test extra has it; without it /a/br is plain
    brotli = None

PREFIX = "/a/"
ETAG = '"v1"'
PAGES = ("gzip", "chunked", "br", "gzip-chunked", "redirect", "etag", "same", "plain")


def page_html(name: str, links: tuple[str, ...] = ()) -> bytes:
    anchors = "".join(f'<a href="{PREFIX}{link}">{link}</a> ' for link in links)
    text = f"<p>{name} " + "archived words " * 40 + "</p>"
    return f"<html><head><title>{name}</title></head><body>{text}{anchors}</body></html>".encode()


@dataclass
class ArchiveWeb:
    sent: dict[str, bytes] = field(default_factory=dict)  # path -> wire body of the last 200
    not_modified: int = 0  # 304s answered
    hits: Counter[str] = field(default_factory=Counter)  # requests, by path
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def install(self, server: SyntheticWeb) -> ArchiveWeb:
        server.add_route(PREFIX, self.dispatch)
        return self

    def _keep(self, path: str, body: bytes) -> None:
        with self._lock:
            self.sent[path] = body

    async def dispatch(self, request: web.Request, host: str) -> web.StreamResponse:
        name = request.path.removeprefix(PREFIX) or "index"
        with self._lock:
            self.hits[request.path] += 1
        html = page_html(name, PAGES if name == "index" else ())
        if name == "redirect":
            raise web.HTTPFound(PREFIX + "plain")
        if name == "etag" and request.headers.get("If-None-Match") == ETAG:
            with self._lock:
                self.not_modified += 1
            return web.Response(status=304, headers={"ETag": ETAG})
        if name in ("chunked", "gzip-chunked"):
            return await self._chunked(request, html, name == "gzip-chunked")
        headers = {"Content-Type": "text/html; charset=utf-8"}
        body = html
        if name == "gzip":
            body, headers["Content-Encoding"] = gzip.compress(html, mtime=0), "gzip"
        elif (
            name == "br"
            and brotli is not None
            and "br" in request.headers.get("Accept-Encoding", "")
        ):
            body, headers["Content-Encoding"] = brotli.compress(html), "br"
        elif name == "etag":
            headers["ETag"] = ETAG
        self._keep(request.path, body)
        return web.Response(body=body, headers=headers)

    async def _chunked(
        self, request: web.Request, html: bytes, gzipped: bool
    ) -> web.StreamResponse:
        body = gzip.compress(html, mtime=0) if gzipped else html
        response = web.StreamResponse(headers={"Content-Type": "text/html; charset=utf-8"})
        if gzipped:
            response.headers["Content-Encoding"] = "gzip"
        response.enable_chunked_encoding()
        await response.prepare(request)
        third = len(body) // 3 + 1
        for start in range(0, len(body), third):
            await response.write(body[start : start + third])
        self._keep(request.path, body)
        return response
