"""Proxies from a provider, checked from the proxies' and the synthetic web's
logs: rotation, eviction and refill, lifetimes, stickiness per bag, and a
crawl that outlives its provider without a single direct request."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from support.hostile_helpers import fetcher, hostile_web, url
from support.proxy import ForwardProxy, Socks5Proxy, run_proxy_in_thread
from support.proxy_provider import ProxyProvider, provider_in_thread

from nadird.common.errors import FetchError
from nadird.config import ProviderConfig, ProviderJson, ProxyConfig, ScoreConfig
from nadird.testing.checks import assert_exact_store, expected_set, site_job
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread


def dead_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def proxies(count: int) -> Iterator[list[ForwardProxy | Socks5Proxy]]:
    with ExitStack() as stack:
        yield [stack.enter_context(run_proxy_in_thread()) for _ in range(count)]


def address(proxy: ForwardProxy | Socks5Proxy) -> str:
    return f"127.0.0.1:{proxy.port}"


def carried(proxy: ForwardProxy | Socks5Proxy) -> list[str]:
    return [e.url for e in proxy.entries()]  # type: ignore[union-attr]


def host_and_path(absolute: str) -> tuple[str, str]:
    parts = urlsplit(absolute)
    return parts.hostname or "", parts.path + (f"?{parts.query}" if parts.query else "")


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


@pytest.mark.slow
def test_a_crawl_outlives_its_provider_and_never_connects_directly(tmp_path: Path) -> None:
    graph = SiteGraph(hosts=3, pages=60)
    with (
        run_in_thread(graph, latency=0.01) as web,
        proxies(2) as pair,
        provider_in_thread(ProxyProvider([address(p) for p in pair])) as provider,
        Cluster(tmp_path) as cluster,
    ):
        jobs = site_job(graph)
        jobs["default"]["proxy_sticky"] = "bag"
        config = cluster.master_config(jobs=jobs, seeds=graph.seeds())
        master = cluster.start("master", "master", config)
        provider_config = {"url": provider.url(), "every": "0.3s", "min_refill": 0.1}
        worker = cluster.worker_config(1, proxies={"providers": [provider_config]})
        cluster.start("worker", "w1", worker)
        total = len(expected_set(graph))
        assert wait_until(lambda: len(web.entries()) > total // 3, 60)
        provider.mode = "fail"  # the provider is down for the rest of the crawl
        failed_from = provider.polls
        assert cluster.wait(master, 120) == 0
        entries = web.entries()
        through = sorted(host_and_path(u) for u in carried(pair[0]) + carried(pair[1]))
    assert_exact_store(cluster, graph)
    assert provider.polls > failed_from  # it was polled, and failed, meanwhile
    # Every request the site saw came through one of the provider's proxies.
    assert through == sorted((e.host, e.path) for e in entries)
    assert carried(pair[0]) and carried(pair[1])
    warnings = [e for e in cluster.proc("w1").logs() if e.get("event") == "proxy_provider_failed"]
    assert 1 <= len(warnings) < provider.polls - failed_from + 1


async def test_a_ban_signal_counts_against_the_proxy_and_the_page_is_retried() -> None:
    from support.hostile import Page

    from nadird.common.typecheck import build
    from nadird.common.urls import fingerprint
    from nadird.job.spec import Job
    from nadird.worker.follow.filter import DomainCounts, LinkPipeline
    from nadird.worker.pages import PageProcessor, PageTask

    job = build(Job, {"proxy_ban": {"statuses": [403], "selector": "#captcha"}})
    with hostile_web() as (web, hostile), proxies(1) as (only,):
        hostile.add_page("h.test", "/403", Page(b"<p>no</p>", status=403))
        hostile.add_page("h.test", "/captcha", Page(b'<div id="captcha">prove it</div>'))
        hostile.add_html("h.test", "/fine")
        config = ProxyConfig(urls=[f"http://{address(only)}"], max_failures=100)
        async with fetcher(proxies=config) as client:
            cfg = client.config
            processor = PageProcessor(client, job, cfg, LinkPipeline(job, cfg, DomainCounts()))
            results = {}
            for path in ("/fine", "/403", "/captcha"):
                target = url(web, "h.test", path)
                results[path] = (
                    await processor.process(PageTask(target, fingerprint(target), 0))
                ).result
            proxy = client.proxies.proxies[0]
    assert results["/fine"] is not None and results["/fine"].error is None
    for path in ("/403", "/captcha"):
        banned = results[path]
        assert banned is not None and banned.error_kind == "proxy", banned
        assert "refused proxy http://127.0.0.1" in (banned.error or "")
    # A success sets the maximum (100); each ban costs 5.
    assert proxy.score == 90 and proxy.errors["ban"] == 2


def test_a_dead_first_proxy_costs_no_page_robots_txt_included(tmp_path: Path) -> None:
    """The provider hands out a dead proxy first: robots.txt and the pages go
    through the live one at once, and the crawl stores every page."""
    graph = SiteGraph(hosts=1, pages=12)
    with (
        run_in_thread(graph) as web,
        proxies(1) as (live,),
        provider_in_thread(ProxyProvider([f"127.0.0.1:{dead_port()}", address(live)])) as provider,
        Cluster(tmp_path) as cluster,
    ):
        config = cluster.master_config(jobs=site_job(graph), seeds=graph.seeds())
        master = cluster.start("master", "master", config)
        worker = cluster.worker_config(1, proxies={"providers": [{"url": provider.url()}]})
        cluster.start("worker", "w1", worker)
        assert cluster.wait(master, 60) == 0
        entries = web.entries()
        through = carried(live)
    assert_exact_store(cluster, graph)
    assert all(r.error is None for r in cluster.records())
    # robots.txt was asked of the live proxy, and every request the site saw came through it.
    assert [p for _, p in map(host_and_path, through)].count("/robots.txt") == 1
    assert sorted(map(host_and_path, through)) == sorted((e.host, e.path) for e in entries)
    retried = [e for e in cluster.proc("w1").logs() if e.get("event") == "proxy_retry"]
    assert retried and str(retried[0]["url"]).endswith("/robots.txt")
