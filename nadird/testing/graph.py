"""A deterministic synthetic web: hosts, pages and links, with no I/O.

Tests and benchmarks need a web whose every page, link and field is known in
advance, so that "the crawler fetched exactly the reachable set" and "it
extracted the right price" can be asserted. Everything here is a pure function
of (seed, host, page): each page draws from its own `random.Random` seeded with
a string, never from `hash()` (salted per process), so two SiteGraphs built with
the same arguments render byte-identical pages in any process.

Shape of one host `site-N.test`:

* `/` (the home page, a crawl seed) and `/p/0` ... `/p/{pages-2}`: `pages` HTML
  pages in all. Pages whose index ends in 7 are orphans: served, never linked.
* The linked pages form a tree under `/` (each page links its children), so
  every non-orphan page is reachable from its own home through same-host links.
  The remaining link slots go to random pages, ~10 % of them on another host.
* Some pages also link to `http://outside.test/...` (out of scope), to
  `/private/...` (disallowed by robots.txt), to `/files/N.pdf` (not HTML) and
  to `/missing/...` (404). Those targets are leaves: they link nowhere.
* Every link is written in one of several equivalent forms (relative, dotted,
  absolute, upper-case host, scheme-relative, with a fragment) so that the
  crawler's URL canonicalization is exercised; `out_links` gives the canonical
  targets.
"""

from __future__ import annotations

import html
import random
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Literal
from urllib.parse import urlsplit

from nadird.testing.graph_pages import (
    PAGE_PATH,
    Form,
    Link,
    PageFacts,
    Target,
    filler_paragraphs,
    h1_of,
    href_of,
    page_facts,
    page_rng,
    pdf_body,
    product_name,
    title_of,
)

OUTSIDE_HOST = "outside.test"
ROBOTS_TXT = "User-agent: *\nDisallow: /private/\n"
HTML_TYPE = "text/html; charset=utf-8"
PDF_TYPE = "application/pdf"
TEXT_TYPE = "text/plain; charset=utf-8"
NOT_FOUND_BODY = b"404: Not Found\n"

# Page indexes with this remainder are orphans. A fixed rule (not a random one)
# lets a reader of a failing test tell an orphan by its URL.
_ORPHAN_MODULUS = 10
_ORPHAN_REMAINDER = 7
# Children per page in the reachability tree: depth stays near log4(pages).
_TREE_FANOUT = 4
_CROSS_HOST_SHARE = 0.1
_FRAGMENT_SHARE = 0.25
# Page index modulo 20 -> the one special link that page carries. Index based so
# that even a ten-page graph has one link of each kind.
_SPECIAL_MODULUS = 20
_SPECIALS = {1: "outside", 3: "private", 4: "pdf", 6: "missing"}

Kind = Literal["home", "page", "private", "pdf", "outside", "robots", "missing"]
_HTML_KINDS: frozenset[Kind] = frozenset({"home", "page", "private", "outside"})


_ANY_HOST_FORMS = (Form.ABSOLUTE, Form.UPPER_HOST, Form.SCHEME_RELATIVE)
_SAME_HOST_FORMS = (Form.ROOT, Form.RELATIVE, Form.DOTTED, *_ANY_HOST_FORMS)


@dataclass(frozen=True)
class Resource:
    """What the server answers for one (host, path)."""

    status: int
    content_type: str
    body: bytes


class SiteGraph:
    """The synthetic web's hosts, pages and links.

    `port` only affects rendering and canonical URLs, never the link structure,
    so a server may set it once it has bound its socket. URLs passed in may use
    any of the equivalent forms; their port is ignored.
    """

    def __init__(
        self,
        hosts: int = 20,
        pages: int = 200,
        port: int = 80,
        links_per_page: int = 8,
        seed: int = 0,
        filler_kb: int = 0,
    ) -> None:
        _check("hosts", hosts, 1)
        _check("pages", pages, 1)
        _check("links_per_page", links_per_page, 1)
        _check("filler_kb", filler_kb, 0)
        self.port = port
        self.pages = pages
        self.links_per_page = links_per_page
        self.seed = seed
        self.filler_kb = filler_kb
        self.hosts: list[str] = [f"site-{n}.test" for n in range(hosts)]
        self._host_index = {host: n for n, host in enumerate(self.hosts)}
        # Tree node 0 is the home page; node k >= 1 is page index _linked[k - 1].
        self._linked = [i for i in range(pages - 1) if not _is_orphan(i)]
        self._node_of = {index: k + 1 for k, index in enumerate(self._linked)}
        # Children may not fill every slot: a special link needs one too.
        self._fanout = max(1, min(_TREE_FANOUT, links_per_page - 1))
        self._filler_pool = filler_paragraphs(seed) if filler_kb else []

    @property
    def port(self) -> int:
        return self._port

    @port.setter
    def port(self, value: int) -> None:
        # 0 is allowed: "not bound yet", before a server learns its port.
        if not 0 <= value <= 65535:
            raise ValueError(f"port must be in 0..65535, got {value}")
        self._port = value

    # ----------------------------------------------------------------- URLs

    def url(self, host: str, path: str) -> str:
        """The canonical absolute URL: lower-case host, port unless 80, no fragment."""
        port = "" if self.port == 80 else f":{self.port}"
        return f"http://{host.lower()}{port}{path}"

    def canonical(self, url: str) -> str:
        """Any equivalent form of one of this graph's URLs, made canonical."""
        return self.url(*_split(url))

    def seeds(self) -> list[str]:
        """The home page of every site host."""
        return [self.url(host, "/") for host in self.hosts]

    def all_pages(self) -> list[str]:
        """Every HTML page of the site hosts, orphans included."""
        paths = ["/", *(f"/p/{i}" for i in range(self.pages - 1))]
        return [self.url(host, path) for host in self.hosts for path in paths]

    def orphans(self) -> list[str]:
        """The pages that exist but that no page links to."""
        indexes = [i for i in range(self.pages - 1) if _is_orphan(i)]
        return [self.url(host, f"/p/{i}") for host in self.hosts for i in indexes]

    def in_site_scope(self, url: str) -> bool:
        """What a polite crawler restricted to the site hosts may fetch."""
        host, path = _split(url)
        return host in self._host_index and not path.startswith("/private/")

    # -------------------------------------------------------------- queries

    def kind(self, host: str, path: str) -> Kind:
        """What is served at (host, path); the query string is not part of it."""
        host, path = host.lower(), path.split("?", 1)[0]
        if path == "/robots.txt" and (host in self._host_index or host == OUTSIDE_HOST):
            return "robots"
        if host == OUTSIDE_HOST:
            return "outside"
        if host not in self._host_index:
            return "missing"
        if path == "/":
            return "home"
        if self._page_index(path) is not None:
            return "page"
        if path.startswith("/private/"):
            return "private"
        if path.startswith("/files/") and path.endswith(".pdf"):
            return "pdf"
        return "missing"

    def status_of(self, url: str) -> int:
        return 404 if self.kind(*_split(url)) == "missing" else 200

    def content_type_of(self, url: str) -> str:
        """The Content-Type the server sends for url (404s are plain text)."""
        kind = self.kind(*_split(url))
        if kind in _HTML_KINDS:
            return HTML_TYPE
        return PDF_TYPE if kind == "pdf" else TEXT_TYPE

    def out_links(self, url: str) -> list[str]:
        """The canonical targets of a page's links, in document order, distinct.

        Empty for anything that is not an HTML page of a site host.
        """
        host, path = _split(url)
        page = self._site_page(host, path)
        if page is None:
            return []
        return [self.url(link.target.host, link.target.path) for link in page.links]

    def expected_fields(self, url: str) -> dict[str, str]:
        """title, h1, price and sku as they appear in the HTML page at url."""
        host, path = _split(url)
        page = self._html_page(host, path)
        if page is None:
            raise ValueError(f"not an HTML page: {url}")
        return {
            "title": title_of(page, host),
            "h1": h1_of(host, path),
            "price": page.price,
            "sku": page.sku,
        }

    def reachable(
        self,
        seeds: Iterable[str],
        in_scope: Callable[[str], bool],
        max_depth: int | None = None,
    ) -> dict[str, int]:
        """Canonical URL -> link depth of everything a crawl from seeds fetches.

        Seeds are taken as given (depth 0, not filtered by in_scope), like a
        crawler's start URLs; a link is followed when in_scope(its canonical
        URL) is True and the page holding it is shallower than max_depth.
        """
        depth: dict[str, int] = {}
        for seed in seeds:
            depth.setdefault(self.canonical(seed), 0)
        queue = deque(depth)
        while queue:
            url = queue.popleft()
            if max_depth is not None and depth[url] >= max_depth:
                continue
            for target in self.out_links(url):
                if target not in depth and in_scope(target):
                    depth[target] = depth[url] + 1
                    queue.append(target)
        return depth

    # ------------------------------------------------------------ rendering

    def html(self, host: str, path: str) -> str | None:
        """The HTML served at (host, path), or None when that is not an HTML page."""
        host, path = host.lower(), path.split("?", 1)[0]
        page = self._html_page(host, path)
        return None if page is None else self._render(host, path, page)

    def resource(self, host: str, path: str) -> Resource:
        """Status, Content-Type and body that the server sends for (host, path)."""
        kind = self.kind(host, path)
        page = self.html(host, path)
        if page is not None:
            return Resource(200, HTML_TYPE, page.encode())
        if kind == "robots":
            return Resource(200, TEXT_TYPE, ROBOTS_TXT.encode())
        if kind == "pdf":
            return Resource(200, PDF_TYPE, pdf_body(host.lower(), path))
        return Resource(404, TEXT_TYPE, NOT_FOUND_BODY)

    def _render(self, host: str, path: str, page: PageFacts) -> str:
        items = "\n".join(
            f'<li><a href="{html.escape(href_of(path, link, self.port))}">'
            f"{html.escape(self._anchor_text(link.target))}</a></li>"
            for link in page.links
        )
        return (
            "<!DOCTYPE html>\n"
            '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{html.escape(title_of(page, host))}</title>\n"
            f'<meta name="sku" content="{html.escape(page.sku)}">\n'
            "</head>\n<body>\n"
            f"<h1>{html.escape(h1_of(host, path))}</h1>\n"
            f'<span class="price">{html.escape(page.price)}</span>\n'
            f'<div class="desc"><p>{html.escape(page.desc)}</p></div>\n'
            f'<ul class="links">\n{items}\n</ul>\n'
            f"{self._filler(host, path)}"
            "</body>\n</html>\n"
        )

    def _anchor_text(self, target: Target) -> str:
        kind = self.kind(target.host, target.path)
        if kind in ("home", "page"):
            return product_name(page_rng(self.seed, target.host, target.path))
        labels = {
            "outside": "Our partner",
            "private": "Members area",
            "pdf": "Download the manual (PDF)",
        }
        return labels.get(kind, "Old offer")

    def _filler(self, host: str, path: str) -> str:
        """Realistic padding, so benchmarks can ask for 50-100 KB pages."""
        if not self.filler_kb:
            return ""
        rng = random.Random(f"{self.seed}:{host}:{path}:filler")
        parts: list[str] = []
        size = 0
        while size < self.filler_kb * 1024:
            paragraph = f"<p>{rng.choice(self._filler_pool)}</p>\n"
            parts.append(paragraph)
            size += len(paragraph)
        return '<div class="reviews">\n' + "".join(parts) + "</div>\n"

    # --------------------------------------------------------------- pages

    def _page_index(self, path: str) -> int | None:
        match = PAGE_PATH.fullmatch(path)
        if match is None or int(match[1]) >= self.pages - 1:
            return None
        return int(match[1])

    def _html_page(self, host: str, path: str) -> PageFacts | None:
        """Any HTML page; private and outside pages have no links."""
        kind = self.kind(host, path)
        if kind in ("private", "outside"):
            return page_facts(page_rng(self.seed, host, path))
        return self._site_page(host, path)

    def _site_page(self, host: str, path: str) -> PageFacts | None:
        """A home or /p/N page of a site host: the only pages that link."""
        kind = self.kind(host, path)
        if kind not in ("home", "page"):
            return None
        rng = page_rng(self.seed, host, path)
        # Facts are drawn before links, so that anchor text for a page (its
        # name, the first draw) can be had without computing its links.
        facts = page_facts(rng)
        return replace(facts, links=self._links(rng, host, path, self._page_index(path)))

    def _links(
        self, rng: random.Random, host: str, path: str, index: int | None
    ) -> tuple[Link, ...]:
        node = 0 if index is None else self._node_of.get(index)
        targets = [] if node is None else self._children(host, node)
        special = self._special(host, index)
        if special is not None and len(targets) < self.links_per_page:
            targets.append(special)
        targets += self._random_targets(rng, Target(host, path), targets)
        rng.shuffle(targets)
        return tuple(self._dress(rng, host, target) for target in targets)

    def _children(self, host: str, node: int) -> list[Target]:
        first = node * self._fanout + 1
        last = min(first + self._fanout, len(self._linked) + 1)
        return [Target(host, self._node_path(child)) for child in range(first, last)]

    def _node_path(self, node: int) -> str:
        return "/" if node == 0 else f"/p/{self._linked[node - 1]}"

    def _special(self, host: str, index: int | None) -> Target | None:
        kind = None if index is None else _SPECIALS.get(index % _SPECIAL_MODULUS)
        if kind == "outside":
            return Target(OUTSIDE_HOST, f"/ads/{host}/{index}")
        if kind == "private":
            return Target(host, f"/private/{index}")
        if kind == "pdf":
            return Target(host, f"/files/{index}.pdf")
        if kind == "missing":
            return Target(host, f"/missing/{index}")
        return None

    def _random_targets(self, rng: random.Random, own: Target, taken: list[Target]) -> list[Target]:
        """Fill the free link slots with distinct linked pages, not the page itself."""
        wanted = self.links_per_page - len(taken)
        seen = {own, *taken}
        found: list[Target] = []
        # Tiny graphs may have fewer candidates than slots: give up, don't loop.
        for _ in range(wanted * 10):
            if len(found) >= wanted:
                break
            target = Target(self._random_host(rng, own.host), self._random_node_path(rng))
            if target not in seen:
                seen.add(target)
                found.append(target)
        return found

    def _random_host(self, rng: random.Random, host: str) -> str:
        count = len(self.hosts)
        if count == 1 or rng.random() >= _CROSS_HOST_SHARE:
            return host
        return self.hosts[(self._host_index[host] + rng.randrange(1, count)) % count]

    def _random_node_path(self, rng: random.Random) -> str:
        return self._node_path(rng.randrange(len(self._linked) + 1))

    def _dress(self, rng: random.Random, host: str, target: Target) -> Link:
        """Pick the written form of a link; other hosts need a host in the URL."""
        forms = _SAME_HOST_FORMS if target.host == host else _ANY_HOST_FORMS
        form = rng.choice(forms)
        fragment = f"sec-{rng.randrange(10)}" if rng.random() < _FRAGMENT_SHARE else ""
        return Link(target, form, fragment)


# ------------------------------------------------------------------ helpers


def _check(name: str, value: int, minimum: int) -> None:
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")


def _is_orphan(index: int) -> bool:
    return index % _ORPHAN_MODULUS == _ORPHAN_REMAINDER


def _split(url: str) -> tuple[str, str]:
    """(lower-case host, path) of an absolute URL; port, query and fragment dropped."""
    parts = urlsplit(url)
    if not parts.hostname:
        raise ValueError(f"not an absolute URL: {url!r}")
    return parts.hostname, parts.path or "/"
