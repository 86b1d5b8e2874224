"""Proxies from a provider in the worker's pool: eviction and refill, lifetimes,
stickiness per bag, groups."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from support.hostile_helpers import fetcher, hostile_web, url
from support.proxy_provider import ProxyProvider, provider_in_thread
from support.proxy_provider_helpers import address, carried, dead_port, proxies

from nadird.common.errors import FetchError
from nadird.config import ProviderConfig, ProviderJson, ProxyConfig, ScoreConfig
from nadird.testing.cluster import wait_until


def from_provider(provider: ProxyProvider, **overrides: Any) -> ProxyConfig:
    settings: dict[str, Any] = {"url": provider.url(), "every": "60s", "min_refill": 0.2}
    score = overrides.pop("score", ScoreConfig())
    settings.update(overrides)
    return ProxyConfig(providers=[ProviderConfig(**settings)], score=score)


async def test_a_dead_provider_proxy_is_dropped_and_the_pool_refilled() -> None:
    with (
        hostile_web() as (web, hostile),
        proxies(2) as (good, spare),
        provider_in_thread(ProxyProvider()) as provider,
    ):
        for i in range(8):
            hostile.add_html("h.test", f"/{i}")
        provider.proxies = [f"127.0.0.1:{dead_port()}", address(good)]
        config = from_provider(provider, min_usable=2, score=ScoreConfig(initial=1))
        async with fetcher(proxies=config) as client:
            assert provider.polls == 1  # polled once before the first fetch
            assert len(client.proxies.proxies) == 2
            provider.proxies = [address(good), address(spare)]  # what it hands out next
            outcomes: list[int] = []
            for i in range(8):
                outcomes.append((await client.fetch(url(web, "h.test", f"/{i}"))).status)
                await asyncio.sleep(0.05)
            pool = client.proxies
            assert wait_until(lambda: pool.usable() == 2, 5)
            await client.fetch(url(web, "h.test", "/0"))
            await client.fetch(url(web, "h.test", "/1"))
    # The dead one failed once (its score was 1) and was dropped, and that
    # request went through the other proxy at once: no fetch failed. The pool
    # ran low and was refilled: the spare proxy carried requests too.
    assert outcomes == [200] * 8 and pool.dropped == {"score": 1}
    assert provider.polls >= 2
    assert carried(spare), "the refilled proxy was never used"
    through = carried(good) + carried(spare)
    assert sorted(through) == sorted(url(web, e.host, e.path) for e in web.entries())


async def test_proxies_past_their_stated_lifetime_are_not_used() -> None:
    with (
        hostile_web() as (web, hostile),
        proxies(2) as (first, second),
        provider_in_thread(ProxyProvider()) as provider,
    ):
        hostile.add_html("h.test", "/")
        provider.proxies, provider.lifetime = [address(first)], 2.0
        spec = ProviderJson(
            items="data",
            address="join(':', [ip, to_string(port)])",
            expires="expire_time",
            timezone=provider.timezone,
        )
        config = from_provider(
            provider, url=provider.url("/json"), format="json", json=spec, min_usable=1
        )
        async with fetcher(proxies=config) as client:
            await client.fetch(url(web, "h.test", "/"))
            provider.proxies, provider.lifetime = [address(second)], 60.0
            # The provider writes whole seconds: the first one ends 1-2 s from now.
            await asyncio.sleep(2.2)
            ended = time.time()
            for _ in range(3):
                await client.fetch(url(web, "h.test", "/"))
            assert client.proxies.dropped["expired"] == 1
    assert len(carried(first)) == 1 and len(carried(second)) == 3
    assert all(e.t < ended for e in first.entries())


async def test_a_bag_keeps_its_proxy_and_other_requests_rotate() -> None:
    with hostile_web() as (web, hostile), proxies(3) as group:
        hostile.add_html("h.test", "/")
        config = ProxyConfig(urls=[f"http://{address(p)}" for p in group])
        async with fetcher(proxies=config) as client:
            for _ in range(6):
                await client.fetch(url(web, "h.test", "/"), sticky="lease-1")
            sticky_counts = [len(carried(p)) for p in group]
            for _ in range(6):
                await client.fetch(url(web, "h.test", "/"))
    assert sorted(sticky_counts) == [0, 0, 6]
    rotated = [len(carried(p)) - before for p, before in zip(group, sticky_counts, strict=True)]
    assert rotated == [2, 2, 2]


async def test_a_job_of_a_group_uses_only_that_groups_proxies() -> None:
    with hostile_web() as (web, hostile), proxies(2) as (plain, cn):
        hostile.add_html("h.test", "/")
        config = ProxyConfig(
            urls=[f"http://{address(plain)}"], groups={"cn": [f"http://{address(cn)}"]}
        )
        async with fetcher(proxies=config) as client:
            for _ in range(3):
                await client.fetch(url(web, "h.test", "/"), proxy_group="cn")
            with pytest.raises(FetchError) as caught:
                await client.fetch(url(web, "h.test", "/"), proxy_group="us")
    assert len(carried(cn)) == 3 and carried(plain) == []
    assert "no usable proxy of group 'us'" in str(caught.value)
    assert len(web.entries()) == 3  # the refused one went nowhere, not direct
