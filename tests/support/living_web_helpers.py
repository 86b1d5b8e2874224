"""An HTTP client and fetch for the living web tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiohttp
from multidict import CIMultiDict

from nadird.testing.resolver import LoopbackResolver


@asynccontextmanager
async def client() -> AsyncIterator[aiohttp.ClientSession]:
    connector = aiohttp.TCPConnector(resolver=LoopbackResolver(), limit=32)
    async with aiohttp.ClientSession(connector=connector) as session:
        yield session


async def fetch(
    session: aiohttp.ClientSession, url: str, headers: dict[str, str] | None = None
) -> tuple[int, CIMultiDict[str], bytes]:
    async with session.get(url, headers=headers or {}) as response:
        return response.status, CIMultiDict(response.headers), await response.read()
