"""Proxies from a provider, checked from the proxies' and the synthetic web's
logs: rotation, eviction and refill, lifetimes, stickiness per bag, and a
crawl that outlives its provider without a single direct request."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from support.hostile_helpers import fetcher, hostile_web, url
from support.proxy_provider import ProxyProvider, provider_in_thread
from support.proxy_provider_helpers import address, carried, dead_port, proxies

from nadird.config import ProxyConfig
from nadird.testing.checks import assert_exact_store, expected_set, site_job
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread


def host_and_path(absolute: str) -> tuple[str, str]:
    parts = urlsplit(absolute)
    return parts.hostname or "", parts.path + (f"?{parts.query}" if parts.query else "")


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
