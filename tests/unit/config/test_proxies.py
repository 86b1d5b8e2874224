"""Outgoing proxies: requests go through them (their own log says so),
failing ones are rested, and a job may opt out."""

from __future__ import annotations

import socket
import time
from contextlib import ExitStack

import pytest
from support.hostile_helpers import fetcher, hostile_web, url
from support.proxy import run_proxy_in_thread

from nadird.common.errors import FetchError
from nadird.config import ProxyConfig
from nadird.worker.fetch.proxies import ProxyPool


def dead_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_requests_go_through_the_proxy_unless_the_job_opts_out() -> None:
    with hostile_web() as (web, hostile), run_proxy_in_thread() as proxy:
        hostile.add_html("h.test", "/a")
        hostile.add_html("h.test", "/b")
        proxies = ProxyConfig(urls=[f"http://127.0.0.1:{proxy.port}"])
        async with fetcher(proxies=proxies) as client:
            via = await client.fetch(url(web, "h.test", "/a"))
            direct = await client.fetch(url(web, "h.test", "/b"), use_proxy=False)
        entries = proxy.entries()
    assert via.status == direct.status == 200
    assert [(e.url, e.absolute_form) for e in entries] == [(url(web, "h.test", "/a"), True)]
    assert [e.path for e in web.entries()] == ["/a", "/b"]


async def test_a_failing_proxy_is_rested_and_the_next_one_used() -> None:
    with hostile_web() as (web, hostile), run_proxy_in_thread() as proxy:
        hostile.add_html("h.test", "/")
        dead = f"http://127.0.0.1:{dead_port()}"
        good = f"http://127.0.0.1:{proxy.port}"
        proxies = ProxyConfig(urls=[dead, good], max_failures=1, cooldown=60.0)
        async with fetcher(proxies=proxies) as client:
            # The first request fails through the dead one and goes through
            # the good one at once; the dead one rests.
            for _ in range(4):
                assert (await client.fetch(url(web, "h.test", "/"))).status == 200
            pool = client.proxies
        assert len(proxy.entries()) == 4
    assert [p.used for p in pool.proxies] == [1, 4]
    assert pool.proxies[0].resting_until > time.monotonic()


async def test_when_every_proxy_fails_the_fetch_fails_with_kind_proxy() -> None:
    with hostile_web() as (web, hostile):
        hostile.add_html("h.test", "/")
        dead = [f"http://127.0.0.1:{dead_port()}" for _ in range(4)]
        async with fetcher(proxies=ProxyConfig(urls=dead, attempts=3)) as client:
            with pytest.raises(FetchError) as caught:
                await client.fetch(url(web, "h.test", "/"))
            tried = [p.used for p in client.proxies.proxies]
    assert caught.value.kind == "proxy" and "refused the connection" in str(caught.value)
    assert tried == [1, 1, 1, 0]  # `attempts` different proxies, none twice
    assert web.entries() == []  # never directly


async def test_the_address_policy_still_applies_to_proxied_requests() -> None:
    with hostile_web() as (web, hostile), run_proxy_in_thread() as proxy:
        hostile.add_html("h.test", "/")
        proxies = ProxyConfig(urls=[f"http://127.0.0.1:{proxy.port}"])
        resolve = {"inside.test": "127.0.0.2", "h.test": "127.0.0.1"}
        async with fetcher(
            proxies=proxies, allow_private=False, allow_networks=["127.0.0.1/32"], resolve=resolve
        ) as client:
            with pytest.raises(FetchError) as caught:
                await client.fetch(f"http://inside.test:{web.port}/")
            assert (await client.fetch(url(web, "h.test", "/"))).status == 200
        assert caught.value.kind == "blocked_address"
        assert [e.url for e in proxy.entries()] == [url(web, "h.test", "/")]


def test_pool_rotation_and_fallback_when_all_rest() -> None:
    pool = ProxyPool(ProxyConfig(urls=["http://a:1", "http://b:1"], max_failures=2))
    assert [pool.pick().url for _ in range(4)] == ["http://a:1", "http://b:1"] * 2  # type: ignore[union-attr]
    for proxy in pool.proxies:
        pool.failed(proxy)
        pool.failed(proxy)
    assert pool.pick() is not None  # all resting: the first to come back is used
    assert not ProxyPool(ProxyConfig())
    assert ProxyPool(ProxyConfig()).pick() is None


def test_socks_proxies_are_accepted_by_config_and_need_the_extra() -> None:
    from nadird.config import FetchConfig

    with pytest.raises(ValueError):
        ProxyConfig(urls=["ftp://x:1"])
    cfg = FetchConfig(proxies=ProxyConfig(urls=["socks5://127.0.0.1:1080"]))
    assert cfg.proxies.urls == ["socks5://127.0.0.1:1080"]


async def test_socks5_proxy_carries_the_request() -> None:
    pytest.importorskip("aiohttp_socks")
    with hostile_web() as (web, hostile), run_proxy_in_thread(kind="socks5") as proxy:
        hostile.add_html("h.test", "/s")
        proxies = ProxyConfig(urls=[f"socks5://127.0.0.1:{proxy.port}"])
        async with fetcher(proxies=proxies) as client:
            outcome = await client.fetch(url(web, "h.test", "/s"))
        # The proxy resolved the name (rdns): it saw h.test, not an address.
        assert [e.url for e in proxy.entries()] == [f"h.test:{web.port}"]
        assert [e.path for e in web.entries()] == ["/s"]
    assert outcome.status == 200


async def test_a_site_a_socks_proxy_cannot_reach_is_the_sites_failure_after_two_proxies() -> None:
    pytest.importorskip("aiohttp_socks")
    port = dead_port()
    with ExitStack() as stack:
        socks = [stack.enter_context(run_proxy_in_thread(kind="socks5")) for _ in range(3)]
        urls = [f"socks5://127.0.0.1:{p.port}" for p in socks]
        async with fetcher(proxies=ProxyConfig(urls=urls, site_blame_after=2)) as client:
            with pytest.raises(FetchError) as caught:
                await client.fetch(f"http://down.test:{port}/")
            scores = [p.score for p in client.proxies.proxies]
        asked = [[e.url for e in p.entries()] for p in socks]
    # The proxies answered "connection refused" for the site: kind connect,
    # tried through two proxies, then the site's (the third is not asked).
    assert caught.value.kind == "connect" and "could not reach the site" in str(caught.value)
    assert asked == [[f"down.test:{port}"], [f"down.test:{port}"], []]
    assert scores == [9, 10, 10]  # the second failure was already the site's
