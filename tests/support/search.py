"""A search form of the synthetic web: results only for a POST, two pages of them.

Paths, on any host:

  GET  /search                 the form (<form method=post action=/search>)
  POST /search                 results for the fields `q` and `page` (1 by
                               default), sent as a form or as a JSON object
  GET  /search/item/Q/N        the page of result N of query Q

A results page names its query (`.query`), its page (`.page`) and holds
PER_PAGE links `a.result` to item pages (plain GETs) on pages 1 to PAGES,
none beyond (where a walk ends). It does not link to the next page: that is
a POST, which a link cannot express. A body that is not a form or JSON
object with a `q` and a whole page number >= 1 is answered 400; with
`key` set, a request without the header `X-Api-Key: KEY` is answered 403.
The access log (testing/access.py) records each request's method and body.
"""

from __future__ import annotations

import html
import json
from urllib.parse import parse_qsl

from aiohttp import web

from nadird.testing.web import SyntheticWeb

PREFIX = "/search"
PAGES = 2
PER_PAGE = 3
FIELDS = {
    "query": [{"css": ".query"}],
    "page": [{"css": ".page"}],
    "results": [{"css": "a.result", "multiple": True}],
}


class SearchForm:
    def __init__(self, key: str | None = None) -> None:
        self.key = key

    def install(self, server: SyntheticWeb) -> None:
        server.add_route(PREFIX, self.route, methods=frozenset({"POST"}))

    @staticmethod
    def hits(query: str, page: int) -> list[str]:
        """The item paths a results page lists."""
        if page > PAGES:
            return []
        first = (page - 1) * PER_PAGE
        return [f"{PREFIX}/item/{query}/{n}" for n in range(first, first + PER_PAGE)]

    async def route(self, request: web.Request, host: str) -> web.StreamResponse:
        if self.key is not None and request.headers.get("X-Api-Key") != self.key:
            return web.Response(status=403, text="403: X-Api-Key wanted\n")
        if request.path.startswith(f"{PREFIX}/item/"):
            return _page(f"<h1 class=item>{html.escape(request.path)}</h1>")
        if request.path != PREFIX:
            return web.Response(status=404, text="404\n")
        if request.method != "POST":
            form = '<form method=post action="/search"><input name=q><input name=page></form>'
            return _page(form)
        asked = _asked(await request.read(), request.content_type)
        if asked is None:
            return web.Response(status=400, text="400: a form or JSON object with q\n")
        query, page = asked
        links = "".join(
            f'<li><a class=result href="{path}">{path}</a></li>' for path in self.hits(query, page)
        )
        heading = f"<h1 class=query>{html.escape(query)}</h1><span class=page>{page}</span>"
        return _page(f"{heading}<ul>{links}</ul>")


def _asked(body: bytes, content_type: str) -> tuple[str, int] | None:
    """(query, page) from a form or a JSON body; None if it holds none."""
    try:
        text = body.decode()
        if content_type == "application/json":
            data = json.loads(text)
            fields = {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
        else:
            fields = dict(parse_qsl(text, keep_blank_values=True))
        query, page = fields["q"], int(fields.get("page", "1"))
    except (ValueError, KeyError):
        return None
    if not query.isalnum() or page < 1:
        return None
    return query, page


def _page(body: str) -> web.Response:
    return web.Response(text=f"<html><body>{body}</body></html>", content_type="text/html")
