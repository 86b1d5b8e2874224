"""Sitemaps: a host's URL lists (sitemaps.org), read once per host per worker.

Sources: the Sitemap: lines of robots.txt, or /sitemap.xml when it has none.
Sitemap indexes are followed breadth first up to max_depth levels; documents
may be gzipped (by Content-Encoding, handled by the fetcher, or as .xml.gz
files, gunzipped here with the same bound). Every bound (documents, URLs,
bytes per document) is counted per host, so a hostile sitemap tree costs at
most max_files fetches of max_bytes each.

The XML parser resolves no entities and loads nothing from the network.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable

from lxml import etree

from nadird.common.errors import FetchError, InvalidURL
from nadird.common.logs import get_logger
from nadird.common.urls import canonicalize
from nadird.config import SitemapConfig
from nadird.worker.fetch.decoding import gunzip_limited
from nadird.worker.fetch.fetcher import Fetcher

log = get_logger()
Pace = Callable[[], Awaitable[None]]
_GZIP_MAGIC = b"\x1f\x8b"


def _canonical(urls: list[str]) -> list[str]:
    """The fetchable ones, canonical (the fetcher takes URLs as already encoded)."""
    kept = []
    for url in urls:
        try:
            kept.append(canonicalize(url))
        except InvalidURL:
            continue
    return kept


def parse_sitemap(body: bytes) -> tuple[str, list[str]]:
    """('urlset' | 'sitemapindex' | '', the <loc> values) of one document."""
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, huge_tree=False, recover=True, load_dtd=False
    )
    try:
        root = etree.fromstring(body, parser=parser)
    except (etree.XMLSyntaxError, ValueError):
        return "", []
    if root is None:
        return "", []
    kind = etree.QName(root).localname
    if kind not in ("urlset", "sitemapindex"):
        return "", []
    locs: list[str] = []
    for element in root.iter("{*}loc"):
        text = (element.text or "").strip()
        if text:
            locs.append(text)
    return kind, locs


class SitemapReader:
    def __init__(self, fetcher: Fetcher, config: SitemapConfig, ttl: float) -> None:
        self._fetcher = fetcher
        self.config = config
        self._ttl = ttl
        self._done: OrderedDict[str, float] = OrderedDict()  # origin -> expiry (monotonic)

    def claim(self, origin: str) -> bool:
        """True once per origin per ttl: the caller then reads its sitemaps."""
        now = time.monotonic()
        expires = self._done.get(origin)
        if expires is not None and expires > now:
            return False
        self._done[origin] = now + self._ttl
        self._done.move_to_end(origin)
        if len(self._done) > 100_000:
            self._done.popitem(last=False)
        return True

    def release(self, origin: str) -> None:
        """Claimable again: the result that carried its sitemaps may never
        have reached the master (its bag was dropped)."""
        self._done.pop(origin, None)

    async def urls(
        self, origin: str, listed: list[str], pace: Pace, use_proxy: bool = True
    ) -> list[str]:
        """The page URLs of the origin's sitemaps (not canonical yet)."""
        found = await self.by_sitemap(origin, listed, pace, use_proxy)
        return [url for _, urls in found for url in urls]

    async def by_sitemap(
        self, origin: str, listed: list[str], pace: Pace, use_proxy: bool = True
    ) -> list[tuple[str, list[str]]]:
        """As urls(), each sitemap file read with the page URLs it listed."""
        cfg = self.config
        sources = listed or [f"{origin}/sitemap.xml"]
        queue: deque[tuple[str, int]] = deque((u, 0) for u in _canonical(sources))
        fetched: set[str] = set()
        found: list[tuple[str, list[str]]] = []
        count = 0
        while queue and len(fetched) < cfg.max_files and count < cfg.max_urls:
            url, depth = queue.popleft()
            if url in fetched:
                continue
            fetched.add(url)
            await pace()
            kind, locs = await self._read(url, use_proxy)
            if kind == "sitemapindex":
                if depth < cfg.max_depth:
                    queue.extend((loc, depth + 1) for loc in _canonical(locs))
            elif kind == "urlset":
                found.append((url, locs[: cfg.max_urls - count]))
                count += len(found[-1][1])
        log.info("sitemaps_read", origin=origin, documents=len(fetched), urls=count)
        return found

    async def _read(self, url: str, use_proxy: bool) -> tuple[str, list[str]]:
        try:
            outcome = await self._fetcher.fetch(
                url, max_bytes=self.config.max_bytes, use_proxy=use_proxy
            )
            if outcome.status != 200:
                return "", []
            body = outcome.body
            if body.startswith(_GZIP_MAGIC):
                body = gunzip_limited(body, self.config.max_bytes)
        except FetchError as exc:
            log.info("sitemap_failed", url=url, error=str(exc))
            return "", []
        return parse_sitemap(body)
