"""A small link graph and an HTTP client for the synthetic web tests."""

from __future__ import annotations

from urllib.parse import urlsplit

import aiohttp

from nadird.testing.graph import SiteGraph
from nadird.testing.resolver import LoopbackResolver

PORT = 8123


UA = "nadird-test/1"


def small_graph(port: int = PORT, **options: int) -> SiteGraph:
    return SiteGraph(hosts=3, pages=40, port=port, **options)


def split(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.hostname or "", parts.path


def client() -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(resolver=LoopbackResolver())
    return aiohttp.ClientSession(connector=connector, headers={"User-Agent": UA})
