"""A synthetic catalog that keeps its data in JSON: an API and script-laden pages.

Served by SyntheticWeb under /api/ and /catalog/ (`Catalog.mount`):

* /api/products?page=N: `per_page` products a page, each with its HTML page
  (`url`, relative) and its JSON detail (`api`, absolute), and `next`, the
  next page's URL, null on the last page. Pages past the end have no items.
* /api/products/N: one product as JSON, except every seventh one
  (`Product.broken`), which claims to be JSON and sends an HTML error page.
* /catalog/item/N: a product page with no price or stock in its HTML: the
  price is in a JSON-LD Product (a string such as "1,299.00"), the stock in
  `window.__INITIAL_STATE__`, written as JSON on even pages and as a
  JavaScript literal (unquoted keys, single quotes, a trailing comma) on odd
  ones. Odd pages also wrap their JSON-LD in an HTML comment, as old pages do.

`Product` holds each page's true values, so stored items can be checked.
`CATALOG_JOB` is a job that walks the API to its end and reads every page.
"""

from __future__ import annotations

import html
import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from aiohttp import web

from nadird.testing.graph import HTML_TYPE


class Routes(Protocol):
    """Where the catalog adds its routes: a SyntheticWeb (web.py mounts the catalog)."""

    def add_route(
        self,
        prefix: str,
        handler: Callable[[web.Request, str], Awaitable[web.StreamResponse]],
        methods: frozenset[str] = ...,
    ) -> None: ...


JSON_TYPE = "application/json"
API = "/api/products"

CATALOG_JOB: dict[str, Any] = {
    "fields": {
        "ids": [{"jmes": "items[].id", "multiple": True}],
        "name": [{"jmes": "name"}, {"jsonld": "Product", "jmes": "name"}],
        "price": [{"jmes": "price"}, {"jsonld": "Product", "jmes": "offers.price"}],
        "stock": [
            {"jmes": "stock"},
            {"script": "window.__INITIAL_STATE__", "jmes": "product.stock"},
        ],
    },
    "schema": {
        "price": {"type": "number", "process": ["number"]},
        "stock": {"type": "integer", "process": ["integer"]},
    },
    "links": {"jmes": ["items[].url", "items[].api"]},
    "paginate": {"param": "page", "until_empty": "ids"},
}


@dataclass(frozen=True)
class Product:
    index: int
    name: str
    price: float  # what the number processor makes of the JSON-LD price
    stock: int

    @property
    def broken(self) -> bool:
        """Its JSON detail claims to be JSON and is not."""
        return self.index % 7 == 3

    @property
    def page(self) -> str:
        return f"/catalog/item/{self.index}"

    @property
    def detail(self) -> str:
        return f"{API}/{self.index}"


def product(seed: int, index: int) -> Product:
    rng = random.Random(f"catalog:{seed}:{index}")
    cents = rng.randrange(100, 500_000)
    return Product(index, f"Kettle {index}", cents / 100, rng.randrange(0, 40))


@dataclass
class Catalog:
    """`count` products of catalog `seed`, `per_page` to a page of the API."""

    count: int = 23
    per_page: int = 5
    seed: int = 1

    def products(self) -> list[Product]:
        return [product(self.seed, i) for i in range(self.count)]

    @property
    def last_page(self) -> int:
        """The last page of the API that has items."""
        return max(1, -(-self.count // self.per_page))

    def mount(self, server: Routes) -> None:
        """Add the routes to a SyntheticWeb."""
        server.add_route("/api/", self.route)
        server.add_route("/catalog/", self.route)

    async def route(self, request: web.Request, host: str) -> web.StreamResponse:
        path = request.path
        if path == API:
            page = request.query.get("page", "1")
            if not page.isdigit() or int(page) < 1:
                return _json({"error": "page must be a whole number from 1"}, status=400)
            return _json(self._listing(request, int(page)))
        for prefix, answer in ((API + "/", self._detail), ("/catalog/item/", self._page)):
            number = path.removeprefix(prefix)
            if path.startswith(prefix) and number.isdigit() and int(number) < self.count:
                return answer(product(self.seed, int(number)))
        return web.Response(status=404, text="404: Not Found\n")

    def _listing(self, request: web.Request, page: int) -> dict[str, Any]:
        origin = f"http://{request.host}"
        first = (page - 1) * self.per_page
        items = [
            {"id": p.index, "url": p.page, "api": origin + p.detail}
            for p in self.products()[first : first + self.per_page]
        ]
        following = f"{API}?page={page + 1}" if page < self.last_page else None
        return {"page": page, "items": items, "next": following}

    def _detail(self, item: Product) -> web.Response:
        if item.broken:
            text = "<html><body><h1>502 Bad Gateway</h1></body></html>"
            return web.Response(body=text.encode(), headers={"Content-Type": JSON_TYPE})
        return _json(
            {"id": item.index, "name": item.name, "price": item.price, "stock": item.stock}
        )

    def _page(self, item: Product) -> web.Response:
        return web.Response(body=_item_html(item).encode(), headers={"Content-Type": HTML_TYPE})


def _item_html(item: Product) -> str:
    ld = json.dumps(
        {
            "@context": "https://schema.org",
            "@type": "Product",
            "name": item.name,
            "offers": {"@type": "Offer", "price": f"{item.price:,.2f}", "priceCurrency": "USD"},
        }
    ).replace("</", "<\\/")
    breadcrumbs = '{"@context": "https://schema.org", "@type": "BreadcrumbList", "name": "Home"}'
    if item.index % 2:
        ld = f"<!--\n{ld}\n-->"
        state = f"{{product: {{id: {item.index}, stock: {item.stock}, name: '{item.name}',}}}}"
    else:
        state = json.dumps({"product": {"id": item.index, "stock": item.stock}})
    return (
        f"<html><head><title>{html.escape(item.name)}</title>"
        f'<script type="application/ld+json">{breadcrumbs}</script>'
        f'<script type="application/ld+json">{ld}</script></head>'
        f"<body><h1>{html.escape(item.name)}</h1><div id=app></div>"
        f"<script>window.__INITIAL_STATE__ = {state};\nrender(window.__INITIAL_STATE__);</script>"
        "</body></html>"
    )


def _json(value: Any, status: int = 200) -> web.Response:
    return web.Response(
        status=status, body=json.dumps(value).encode(), headers={"Content-Type": JSON_TYPE}
    )
