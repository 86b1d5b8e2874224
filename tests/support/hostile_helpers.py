"""A synthetic web with its hostile corner, and fetch settings for tests of
the worker's politeness and hardening (imported by the test modules)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from nadird.config import FetchConfig, RobotsConfig, ThrottleConfig
from nadird.testing.graph import SiteGraph
from nadird.testing.web import SyntheticWeb, run_in_thread
from nadird.worker.fetch.fetcher import Fetcher
from support.hostile import HostileWeb

MIB = 1024 * 1024


@contextmanager
def hostile_web(**kwargs: Any) -> Iterator[tuple[SyntheticWeb, HostileWeb]]:
    """A running synthetic web (one tiny graph host) with a HostileWeb installed."""
    with run_in_thread(SiteGraph(hosts=1, pages=2), **kwargs) as web:
        yield web, HostileWeb().install(web)


def fetch_config(**overrides: Any) -> FetchConfig:
    """Small limits and short timeouts, *.test pinned to loopback."""
    base = FetchConfig(
        resolve={"*.test": "127.0.0.1"},
        allow_private=True,
        connect_timeout=1.0,
        read_timeout=0.5,
        total_timeout=2.0,
        max_body_bytes=MIB,
        max_decoded_bytes=MIB,
        robots=RobotsConfig(ttl=60.0, error_ttl=5.0),
        throttle=ThrottleConfig(adaptive=False),
    )
    return dataclasses.replace(base, **overrides)


@asynccontextmanager
async def fetcher(**overrides: Any) -> AsyncIterator[Fetcher]:
    client = Fetcher(fetch_config(**overrides))
    await client.start()
    try:
        yield client
    finally:
        await client.close()


def url(web: SyntheticWeb, host: str, path: str) -> str:
    return f"http://{host}:{web.port}{path}"
