"""The console's pages of one URL and of one domain, and a stored page's
raw text: linked from every table that names a URL or a domain."""

from __future__ import annotations

from aiohttp import web
from w3lib.encoding import html_to_unicode

from nadird.common.errors import StoreError
from nadird.common.urls import fingerprint
from nadird.master.console.app import PREFIX, ConsoleApp, PageError
from nadird.master.console.browser_sessions import Session
from nadird.master.console.domain_view import domain_view
from nadird.master.console.item_page import item_view
from nadird.master.console.url_page import CHART_VERSIONS, as_stored, url_view
from nadird.master.results.recent import RECENT_FETCHES

MAX_URL = 8192  # characters of a `u=` parameter: longer is no URL the master keeps
RAW_SHOWN = 2_000_000  # bytes of a stored body shown as text


class HistoryPages:
    def __init__(self, console: ConsoleApp) -> None:
        self.console = console
        self.master = console.master

    def add_routes(self, app: web.Application) -> None:
        page = self.console.page
        app.router.add_get(PREFIX + "/url", page(self.url))
        app.router.add_get(PREFIX + "/url/raw", page(self.raw))
        app.router.add_get(PREFIX + "/domain", page(self.domain))
        app.router.add_get(PREFIX + "/item", page(self.item))

    def _url_param(self, request: web.Request) -> str:
        url = request.query.get("u", "").strip()
        if not url or len(url) > MAX_URL:
            raise PageError(400, "error.no_url")
        return url

    async def url(self, request: web.Request, session: Session) -> web.Response:
        url = self._url_param(request)
        try:
            view = await url_view(self.master, url, request.query)
        except StoreError as exc:
            return self.console.render(
                request, "url.html", session, view=None, problem=str(exc), url=url
            )
        return self.console.render(
            request, "url.html", session, view=view, problem=None, url=url,
            fetches_kept=RECENT_FETCHES, chart_versions=CHART_VERSIONS,
        )  # fmt: skip

    async def raw(self, request: web.Request, session: Session) -> web.Response:
        """The stored body as text in a <pre>: escaped like any value, never a page."""
        url = self._url_param(request)
        try:
            record = await self.master.stored_page(fingerprint(url))
            if record is None and as_stored(url) != url:
                record = await self.master.stored_page(fingerprint(as_stored(url)))
        except StoreError as exc:
            raise PageError(503, "error.store") from exc
        if record is None:
            raise PageError(404, "error.not_stored")
        body = record.body or b""
        # As a browser would read it: a byte order mark, the Content-Type's
        # charset, a <meta> near the top, else UTF-8 (w3lib).
        _, text = html_to_unicode(record.content_type, body[:RAW_SHOWN])
        return self.console.render(
            request, "raw.html", session, url=url, record=record, text=text,
            cut=len(body) > RAW_SHOWN, shown=RAW_SHOWN,
        )  # fmt: skip

    async def item(self, request: web.Request, session: Session) -> web.Response:
        job, key = request.query.get("job", ""), request.query.get("key", "")
        if not job or not key or len(key) > MAX_URL:
            raise PageError(400, "error.no_item")
        try:
            view = await item_view(self.master, job, key)
        except StoreError as exc:
            raise PageError(503, "error.store") from exc
        if view is None:
            raise PageError(404, "error.unknown_item")
        return self.console.render(
            request, "item.html", session, view=view, chart_versions=CHART_VERSIONS
        )

    async def domain(self, request: web.Request, session: Session) -> web.Response:
        name = request.query.get("d", "").strip().lower()
        view = domain_view(self.master, name) if 0 < len(name) <= 253 else None
        if view is None:
            raise PageError(404, "error.unknown_domain")
        return self.console.render(request, "domain.html", session, view=view)
