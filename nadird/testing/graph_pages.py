"""The synthetic web's page model and the text pages are dressed in.

Pure functions of a seeded `random.Random`: see graph.py for why every page
has its own stream.
"""

from __future__ import annotations

import posixpath
import random
import re
from dataclasses import dataclass
from enum import Enum

PAGE_PATH = re.compile(r"/p/(0|[1-9][0-9]*)")


def _words(text: str) -> tuple[str, ...]:
    # Word lists read better as prose than as a column of one-word literals.
    return tuple(text.split())


_ADJECTIVES = _words(
    "Sturdy Bright Compact Vintage Modern Rustic Silent Swift Gentle Bold Classic Elegant "
    "Handy Golden Crimson Polished Woven Frosted Quiet Daring"
)
_NOUNS = _words(
    "Lamp Kettle Backpack Chair Teapot Lantern Notebook Blanket Clock Bicycle Compass Mug "
    "Satchel Easel Radio Umbrella Stool Basket Camera Skillet"
)
_WORDS = _words(
    "the a of and with for this that every our your made crafted designed built tested "
    "durable light warm soft strong simple careful daily travel kitchen garden office home "
    "season gift quality material finish colour shape size comfort value detail feature "
    "customer review delivery warranty handle surface edge corner frame cover layer "
    "morning evening weekend family friend workshop market city village river mountain"
)


class Form(Enum):
    """How one link is written in the HTML; all forms resolve to the same URL."""

    ROOT = "root"  # /p/3
    RELATIVE = "relative"  # 3, ../files/4.pdf, p/3: shortest path from the page's directory
    DOTTED = "dotted"  # ../p/3, ./p/3: climbs to the root first
    ABSOLUTE = "absolute"  # http://site-1.test:PORT/p/3
    UPPER_HOST = "upper-host"  # http://SITE-1.TEST:PORT/p/3 (port 80 written out)
    SCHEME_RELATIVE = "scheme-relative"  # //site-1.test:PORT/p/3


@dataclass(frozen=True)
class Target:
    host: str
    path: str


@dataclass(frozen=True)
class Link:
    target: Target
    form: Form
    fragment: str  # "" for none


@dataclass(frozen=True)
class PageFacts:
    """The port-independent facts of one HTML page; rendering adds the port."""

    name: str
    price: str
    sku: str
    desc: str
    links: tuple[Link, ...]


def page_rng(seed: int, host: str, path: str) -> random.Random:
    """The one random stream of a page: /p/N is keyed by N, other pages by path."""
    match = PAGE_PATH.fullmatch(path)
    key = match[1] if match else path
    return random.Random(f"{seed}:{host}:{key}")


def product_name(rng: random.Random) -> str:
    return f"{rng.choice(_ADJECTIVES)} {rng.choice(_NOUNS)}"


def page_facts(rng: random.Random) -> PageFacts:
    """Everything but the links; the name must stay the first draw (see _anchor_text)."""
    name = product_name(rng)
    cents = rng.randrange(100, 100_000)
    return PageFacts(
        name=name,
        price=f"${cents // 100}.{cents % 100:02d}",
        sku=f"SKU-{rng.randrange(16**8):08X}",
        desc=" ".join(sentence(rng) for _ in range(rng.randrange(2, 5))),
        links=(),
    )


def sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randrange(8, 15))]
    return " ".join(words).capitalize() + "."


def title_of(page: PageFacts, host: str) -> str:
    return f"{page.name} | {host}"


def h1_of(host: str, path: str) -> str:
    return f"Page {host} {path}"


def filler_paragraphs(seed: int) -> list[str]:
    rng = random.Random(f"{seed}:filler")
    return [" ".join(sentence(rng) for _ in range(rng.randrange(3, 7))) for _ in range(64)]


def pdf_body(host: str, path: str) -> bytes:
    """A few hundred bytes that look like a PDF to anything sniffing the start."""
    text = f"Synthetic document {host}{path}"
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET"
    return (
        "%PDF-1.4\n"
        "1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
        "2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n"
        "3 0 obj << /Type /Page /Parent 2 0 R /Contents 4 0 R >> endobj\n"
        f"4 0 obj << /Length {len(stream)} >> stream\n{stream}\nendstream endobj\n"
        "trailer << /Root 1 0 R >>\n%%EOF\n"
    ).encode()


def href_of(page_path: str, link: Link, port: int) -> str:
    """How `link` is written on the page at `page_path` of a web served on `port`."""
    target, form = link.target, link.form
    if form is Form.ROOT:
        href = target.path
    elif form is Form.RELATIVE:
        href = posixpath.relpath(target.path, posixpath.dirname(page_path))
    elif form is Form.DOTTED:
        climb = "../" * (page_path.count("/") - 1) or "./"
        href = climb + target.path.lstrip("/")
    else:
        href = absolute_href(target, form, port)
    return f"{href}#{link.fragment}" if link.fragment else href


def absolute_href(target: Target, form: Form, port: int) -> str:
    host = target.host.upper() if form is Form.UPPER_HOST else target.host
    # Port 80 is written out only in the upper-case form, so that a
    # default-port variant appears when the graph is served on port 80.
    if port != 80 or form is Form.UPPER_HOST:
        host = f"{host}:{port}"
    prefix = "//" if form is Form.SCHEME_RELATIVE else "http://"
    return f"{prefix}{host}{target.path}"
