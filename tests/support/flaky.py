"""Failure modes for retry tests: pages that fail a few times, pages that
fail until the test says they are fixed. Paths, on any host:

  /flaky/N/...   500 for the first N requests of each path, then a page
  /broken/...    500 until `routes.fixed` is set, then a page
"""

from __future__ import annotations

import threading
from collections import Counter

from aiohttp import web

from nadird.testing.web import SyntheticWeb


def _page(host: str, path: str) -> web.Response:
    body = f"<html><head><title>{host}{path}</title></head><body><h1>{path}</h1></body></html>"
    return web.Response(text=body, content_type="text/html")


class FlakyRoutes:
    def __init__(self) -> None:
        self.fixed = False
        self.requests: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()

    def install(self, server: SyntheticWeb) -> None:
        server.add_route("/flaky/", self.flaky)
        server.add_route("/broken/", self.broken)

    def _count(self, host: str, path: str) -> int:
        with self._lock:
            self.requests[(host, path)] += 1
            return self.requests[(host, path)]

    async def flaky(self, request: web.Request, host: str) -> web.StreamResponse:
        failures = int(request.path.split("/")[2])
        if self._count(host, request.path) <= failures:
            return web.Response(status=500, text="try again")
        return _page(host, request.path)

    async def broken(self, request: web.Request, host: str) -> web.StreamResponse:
        self._count(host, request.path)
        if not self.fixed:
            return web.Response(status=500, text="broken")
        return _page(host, request.path)
