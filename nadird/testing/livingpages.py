"""The pages of the living web and when they change, with no I/O.

Each page changes as a Poisson process of a known rate, in virtual seconds
since the living web's time 0. Its change times are drawn lazily from a
random stream of its own (`random.Random` seeded with a string, so any process
built with the same arguments draws the same times), so for any time t the
version live at t (the number of changes at or before t) and when that version
became live are known without a background task.

Change times are whole virtual seconds, strictly increasing (an arrival is
rounded up, and pushed one second past the previous change if it lands on
it): Last-Modified has one-second resolution, and this keeps it a correct
validator. The rounding delays a change by under a second and drops none,
so long-run rates are unchanged.

What a version holds depends on the page's kind: a product's price (the
old and new values of every change are known: `price`), an article's text,
a hub's list of items. Noise (a CSRF token, a timestamp, a rotating ad, a
session id in a link) changes on every response and is no part of a version.
"""

from __future__ import annotations

import bisect
import hashlib
import html
import math
import random
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from nadird.testing.graph_pages import product_name, sentence

# Changes per virtual second: every minute, ten minutes, hour, six hours,
# day, and never. Pages draw a tier each, evenly.
RATE_TIERS: tuple[float, ...] = (1 / 60, 1 / 600, 1 / 3600, 1 / 21600, 1 / 86400, 0.0)

Kind = Literal["product", "article", "hub"]
KIND_WEIGHTS: dict[Kind, int] = {"product": 5, "article": 3, "hub": 2}

# How a page answers conditional GETs:
#   both           strong ETag + Last-Modified; 304 when either matches the live version
#   etag           ETag only;  last-modified  Last-Modified only;  none  neither
#   rotating-etag  a new ETag on every response (never matches), no Last-Modified
#   ignored-etag   a correct ETag, but If-None-Match never answered with 304
#   rotating-etag-dated  a new ETag on every response and a correct Last-Modified:
#                  If-None-Match, when sent, decides (never 304), If-Modified-Since alone
#                  works (not drawn by default: pass it in `validators`)
Validators = Literal[
    "both", "etag", "last-modified", "none", "rotating-etag", "ignored-etag", "rotating-etag-dated"
]
VALIDATOR_WEIGHTS: dict[Validators, int] = {
    "both": 30,
    "etag": 15,
    "last-modified": 15,
    "none": 26,
    "rotating-etag": 7,
    "ignored-etag": 7,
}
NOISE_SHARE = 0.3
PAGES_PER_HOST = 50
_HUB_ITEMS = 8
_ARTICLE_PARAGRAPHS = 3
_ADS = (
    "Free delivery this week only",
    "Sign up and save 10 %",
    "New arrivals in the garden shop",
    "Two for one on selected mugs",
    "Winter sale: up to 40 % off",
)


class ChangeSchedule:
    """When one page changes: a Poisson process of `rate` per virtual second.

    Version 0 is live from time 0; change k (1-based) at `times[k-1]` makes
    version k live. Times are drawn on demand, up to the time asked about.
    Thread-safe: the server's thread and a test's thread may both ask.
    """

    def __init__(self, rate: float, key: str) -> None:
        if not (rate >= 0 and math.isfinite(rate)):
            raise ValueError(f"expected a change rate >= 0 per second, got {rate}")
        self.rate = rate
        self._rng = random.Random(key)
        self._arrival = 0.0  # the unrounded Poisson arrival time, so rounding cannot drift
        self._times: list[float] = []
        self._lock = threading.Lock()

    def _draw_past(self, t: float) -> None:
        if self.rate == 0:
            return
        times = self._times
        while not times or times[-1] <= t:
            self._arrival += self._rng.expovariate(self.rate)
            last = times[-1] if times else 0.0
            times.append(max(float(math.ceil(self._arrival)), last + 1.0))

    def version_at(self, t: float) -> int:
        """The version live at virtual time t: the number of changes at or before t."""
        with self._lock:
            self._draw_past(t)
            return bisect.bisect_right(self._times, t)

    def changes_until(self, t: float) -> list[float]:
        """The change times at or before t, in order."""
        with self._lock:
            self._draw_past(t)
            return self._times[: bisect.bisect_right(self._times, t)]

    def became_live(self, version: int) -> float:
        """When `version` became live (0.0 for version 0; inf for one never reached)."""
        if version <= 0:
            return 0.0
        if self.rate == 0:
            return math.inf
        with self._lock:
            while len(self._times) < version:
                self._draw_past(self._times[-1] if self._times else 0.0)
            return self._times[version - 1]


@dataclass
class LivingPage:
    index: int  # its number in the collection, 0-based
    host: str
    path: str
    kind: Kind
    rate: float  # changes per virtual second
    validators: Validators
    noise: bool
    name: str
    schedule: ChangeSchedule = field(repr=False)
    _prices: list[int] = field(default_factory=list, repr=False)  # cents, per version
    _price_rng: random.Random = field(default_factory=random.Random, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def price(self, version: int) -> int | None:
        """The price in cents at `version` (None for other kinds); every change moves it."""
        if self.kind != "product":
            return None
        with self._lock:
            while len(self._prices) <= version:
                self._prices.append(self._next_price())
            return self._prices[version]

    def _next_price(self) -> int:
        rng = self._price_rng
        if not self._prices:
            return rng.randrange(500, 50_000)
        last = self._prices[-1]
        # Up or down by 5 to 25 %: a change always shows, and prices stay positive.
        factor = 1 + rng.choice((-1, 1)) * rng.uniform(0.05, 0.25)
        return max(100, round(last * factor)) if last > 100 else last + rng.randrange(10, 100)


@dataclass(frozen=True)
class Noise:
    """What one response adds that is no part of the page's content."""

    token: str  # CSRF token, and the session id in the cart link
    generated: str  # the time the page says it was generated
    ad: str


def build_pages(
    count: int,
    seed: int,
    pages_per_host: int = PAGES_PER_HOST,
    rates: Sequence[float] = RATE_TIERS,
    validators: dict[Validators, int] | None = None,
    noise_share: float = NOISE_SHARE,
) -> list[LivingPage]:
    """The collection: `count` pages on hosts living-0.test, living-1.test, ...

    Each page draws its kind, rate tier, validators and noise from its own
    stream; the first page of every host is a hub, so every host lists items.
    """
    if count < 1 or pages_per_host < 1:
        raise ValueError(f"expected pages >= 1 and pages per host >= 1, got {count}")
    if not rates:
        raise ValueError("expected at least one change rate")
    weights = validators if validators is not None else VALIDATOR_WEIGHTS
    pages = []
    for index in range(count):
        rng = random.Random(f"{seed}:living:{index}")
        kind: Kind = "hub"
        if index % pages_per_host:
            kind = rng.choices(list(KIND_WEIGHTS), list(KIND_WEIGHTS.values()))[0]
        else:
            rng.random()  # the draw a kind takes: other attributes stay put
        rate = rates[rng.randrange(len(rates))]
        pages.append(
            LivingPage(
                index=index,
                host=f"living-{index // pages_per_host}.test",
                path=f"/{kind}/{index}",
                kind=kind,
                rate=rate,
                validators=rng.choices(list(weights), list(weights.values()))[0],
                noise=rng.random() < noise_share,
                name=product_name(rng),
                schedule=ChangeSchedule(rate, f"{seed}:living:{index}:changes"),
                _price_rng=random.Random(f"{seed}:living:{index}:price"),
            )
        )
    return pages


def etag(seed: int, page: LivingPage, version: int) -> str:
    """The page's ETag for a version: weak when noise makes the bytes differ."""
    digest = hashlib.blake2b(f"{seed}:{page.index}:{version}".encode(), digest_size=8)
    return ("W/" if page.noise else "") + f'"{digest.hexdigest()}"'


def noise_for(seed: int, serial: int, generated: str) -> Noise:
    digest = hashlib.blake2b(f"{seed}:noise:{serial}".encode(), digest_size=12).hexdigest()
    return Noise(token=digest, generated=generated, ad=_ADS[int(digest[:4], 16) % len(_ADS)])


def render(
    seed: int,
    page: LivingPage,
    version: int,
    host_pages: Sequence[LivingPage],
    noise: Noise | None,
) -> bytes:
    """The page's HTML at `version`; host_pages are the pages of its host (for the links)."""
    title = html.escape(f"{page.name} | {page.host}")
    head = f"<title>{title}</title>"
    if noise is not None:
        head += f'<meta name="csrf-token" content="{noise.token}">'
    hubs = [p for p in host_pages if p.kind == "hub"]
    nav = " ".join(f'<a href="{p.path}">{html.escape(p.name)}</a>' for p in hubs)
    parts = [f'<nav><a href="/">Home</a> {nav}</nav>', f"<h1>{html.escape(page.name)}</h1>"]
    parts.append(_main(seed, page, version, host_pages))
    if noise is not None:
        parts.append(f'<aside class="ad">{html.escape(noise.ad)}</aside>')
        parts.append(f'<a href="/cart?sid={noise.token[:16]}">Cart</a>')
        parts.append(f"<footer>Page generated {noise.generated}</footer>")
    body = "\n".join(parts)
    return f"<!DOCTYPE html>\n<html><head>{head}</head>\n<body>\n{body}\n</body></html>\n".encode()


def _main(seed: int, page: LivingPage, version: int, host_pages: Sequence[LivingPage]) -> str:
    rng = random.Random(f"{seed}:living:{page.index}:v{version}")
    if page.kind == "product":
        cents = page.price(version) or 0
        price = f"{cents // 100}.{cents % 100:02d}"
        ld = (
            '{"@context": "https://schema.org", "@type": "Product", '
            f'"name": "{page.name}", "offers": {{"@type": "Offer", '
            f'"price": "{price}", "priceCurrency": "EUR"}}}}'
        )
        return (
            f'<script type="application/ld+json">{ld}</script>\n'
            f'<p>Price: <span class="price" itemprop="price">{price}</span> EUR</p>'
        )
    if page.kind == "article":
        paragraphs = (
            " ".join(sentence(rng) for _ in range(rng.randrange(3, 6)))
            for _ in range(_ARTICLE_PARAGRAPHS)
        )
        return "<article>" + "".join(f"<p>{text}</p>" for text in paragraphs) + "</article>"
    items = [p for p in host_pages if p.kind != "hub"]
    chosen = rng.sample(items, min(_HUB_ITEMS, len(items)))
    listing = "".join(f'<li><a href="{p.path}">{html.escape(p.name)}</a></li>' for p in chosen)
    return f'<p class="headline">{sentence(rng)}</p><ul class="items">{listing}</ul>'
