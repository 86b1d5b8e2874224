"""A synthetic shop whose product pages show prices the way real shops do.

Served by SyntheticWeb under /shop/ (`Shop.route`): /shop/ lists every
product, /shop/item/N is one product with a title, a price and a listing
date, each written in one of several real-world formats (Chinese, English
and European prices, full-width digits, 万 multipliers; Chinese, ISO,
English and relative dates). Some products are broken on purpose (a price
on request, a number with two decimal separators, no title), and the shop
knows which: `Product` holds each page's true values and the fields an item
of it must fail on, so a crawl's stored items can be checked against them.
`SHOP_SCHEMA` is the job schema that reads these pages.

Every product page shows its SKU (`.sku`), but for a few without one
(`Product.sku` None). With `aliases`, the listing links each product under
three URLs, /shop/item/N, /shop/item/N?src=list and /shop/p/N/product-N, all
serving the same page: one product, three URLs, for business keys. With
`fail_first`, each product URL answers 500 to its first that many requests.
"""

from __future__ import annotations

import html
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from nadird.testing.graph import HTML_TYPE

FETCHED_TZ = "Asia/Shanghai"
_FULL_WIDTH = str.maketrans("0123456789,.", "０１２３４５６７８９，．")


def _european(value: float, group: str) -> str:
    us = f"{value:,.2f}"  # 12,345.67
    return us.replace(",", "\0").replace(".", ",").replace("\0", group) + " €"


# Each takes the price in cents and gives (the text shown, the true price).
_PRICE_FORMATS = [
    lambda c: (f"￥{c // 100:,}", c // 100),
    lambda c: (f"价格：{c // 100:,}元", c // 100),
    lambda c: (f"${c / 100:,.2f}", c / 100),
    lambda c: (_european(c / 100, "."), c / 100),
    lambda c: (_european(c / 100, "\u00a0"), c / 100),
    lambda c: (_european(c / 100, " "), c / 100),
    lambda c: (f"¥{c // 100:,}".translate(_FULL_WIDTH), c // 100),
    lambda c: (f"  USD {c / 100:,.2f}\n", c / 100),
    lambda c: (f"¥{c // 100_000 / 10}万", c // 100_000 * 1000),
]
_BROKEN_PRICES = ["价格面议", "1.234,56.78 €", "$ --"]
_DATE_FORMATS = [
    lambda d: f"{d[0]}年{d[1]}月{d[2]}日 {d[3]:02d}:{d[4]:02d}",
    lambda d: f" {d[0]}-{d[1]:02d}-{d[2]:02d} {d[3]:02d}:{d[4]:02d} ",
    lambda d: f"{d[2]:02d}.{d[1]:02d}.{d[0]} {d[3]:02d}:{d[4]:02d}",
]

SHOP_SCHEMA: dict[str, Any] = {
    "title": {"type": "string", "required": True, "process": ["strip"]},
    "price": {"type": "number", "required": True, "process": ["strip", "number"]},
    "listed": {"type": "datetime", "process": [{"datetime": {"tz": FETCHED_TZ}}]},
    "link": {"type": "url", "process": ["first", "url"]},
}
SHOP_FIELDS: dict[str, Any] = {
    "title": [{"css": "h1.title"}],
    "price": [{"css": ".price"}],
    "listed": [{"css": ".listed"}],
    "link": [{"css": "a.next", "attr": "href", "multiple": True}],
}


@dataclass(frozen=True)
class Product:
    index: int
    title: str | None
    price_text: str
    price: int | float | None  # the true price; None when the page shows none
    listed_text: str
    listed: str  # ISO 8601 in FETCHED_TZ
    invalid: tuple[str, ...]  # the fields an item of this page fails on

    @property
    def path(self) -> str:
        return f"/shop/item/{self.index}"

    @property
    def sku(self) -> str | None:
        """The SKU the page shows; a few pages show none."""
        return None if self.index % 13 == 9 else f"SKU-{self.index:04d}"

    def aliases(self) -> list[str]:
        """Every path that serves this product when the shop has aliases."""
        return [self.path, f"{self.path}?src=list", f"/shop/p/{self.index}/product-{self.index}"]


def product(seed: int, index: int) -> Product:
    """Product `index` of the shop `seed`: the same in every process."""
    rng = random.Random(f"shop:{seed}:{index}")
    invalid: list[str] = []
    cents = rng.randrange(100, 200_000_000)
    value: int | float | None
    if index % 7 == 3:
        price_text, value = rng.choice(_BROKEN_PRICES), None
        invalid.append("price")
    else:
        price_text, value = rng.choice(_PRICE_FORMATS)(cents)
    title: str | None = f"Product {index}"
    if index % 11 == 5:
        title = None
        invalid.append("title")
    day = (2026, 1 + index % 12, 1 + index % 28, index % 24, (index * 7) % 60)
    listed_text = _DATE_FORMATS[index % len(_DATE_FORMATS)](day)
    listed = f"{day[0]}-{day[1]:02d}-{day[2]:02d}T{day[3]:02d}:{day[4]:02d}:00+08:00"
    return Product(index, title, price_text, value, listed_text, listed, tuple(sorted(invalid)))


@dataclass
class Shop:
    """`count` products of shop `seed`, servable by SyntheticWeb.add_route."""

    count: int = 40
    seed: int = 1
    aliases: bool = False
    fail_first: int = 0
    # Requests per product URL (path and query) so far, for fail_first.
    _asked: Counter[str] = field(default_factory=Counter, repr=False)

    def products(self) -> list[Product]:
        return [product(self.seed, i) for i in range(self.count)]

    async def route(self, request: web.Request, host: str) -> web.StreamResponse:
        path = request.path
        if path == "/shop/":
            return _page(self._listing())
        number = path.removeprefix("/shop/item/")
        if self.aliases and path.startswith("/shop/p/"):
            number = path.removeprefix("/shop/p/").split("/", 1)[0]
        if number.isdigit() and int(number) < self.count:
            self._asked[request.path_qs] += 1
            if self._asked[request.path_qs] <= self.fail_first:
                return web.Response(status=500, text="500: try again later\n")
            return _page(_item_html(product(self.seed, int(number)), self.count))
        return web.Response(status=404, text="404: Not Found\n")

    def _listing(self) -> str:
        paths = [
            path
            for item in self.products()
            for path in (item.aliases() if self.aliases else [item.path])
        ]
        links = "".join(f'<li><a href="{path}">{path}</a></li>' for path in paths)
        return f"<html><head><title>Shop</title></head><body><ul>{links}</ul></body></html>"


def _item_html(item: Product, count: int) -> str:
    title = f'<h1 class="title">{html.escape(item.title)}</h1>' if item.title else ""
    sku = f'<p class="sku">{item.sku}</p>' if item.sku else ""
    following = (item.index + 1) % count
    return (
        f"<html><head><title>item {item.index}</title></head><body>{title}{sku}"
        f'<p>Price <span class="price">{html.escape(item.price_text)}</span></p>'
        f'<p>Listed <span class="listed">{html.escape(item.listed_text)}</span></p>'
        f'<a class="next" href="/shop/item/{following}">next</a></body></html>'
    )


def _page(text: str) -> web.Response:
    return web.Response(body=text.encode(), headers={"Content-Type": HTML_TYPE})
