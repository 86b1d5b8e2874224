"""robots.txt: the RFC 9309 rules (Protego), and what a fetch of it means."""

from __future__ import annotations

import time
from collections import deque

import pytest
from protego import Protego
from support.hostile_helpers import fetch_config, fetcher, hostile_web, url
from support.robots_helpers import GROUPS, GROUPS_VERDICTS, STAR, STAR_VERDICTS

from nadird.common.urls import fingerprint
from nadird.config import ThrottleConfig
from nadird.job.spec import Job
from nadird.protocol.messages import PageResult
from nadird.worker.bag import BagRun, RobotsGate, crawl_bag
from nadird.worker.fetch.robots import RobotsCache, RobotsRules
from nadird.worker.fetch.throttle import DomainPace, Pacer
from nadird.worker.follow.filter import DomainCounts, LinkPipeline
from nadird.worker.pages import PageProcessor, PageTask

# (robots.txt, path, allowed for the token 'nadird')
CASES = [
    *((STAR, path, allowed) for path, allowed in STAR_VERDICTS.items()),
    *((GROUPS, path, allowed) for path, allowed in GROUPS_VERDICTS.items()),
    ("User-agent: *\nDisallow: /\n", "/", False),
    ("User-agent: *\nDisallow: /\nAllow: /$\n", "/", True),
    ("User-agent: *\nDisallow:\n", "/x", True),  # empty Disallow allows all
    ("garbage \x00 text\n<html>", "/x", True),
]


@pytest.mark.parametrize(("robots", "path", "allowed"), CASES)
def test_rfc9309_rules(robots: str, path: str, allowed: bool) -> None:
    rules = RobotsRules("rules", 0.0, Protego.parse(robots))
    assert rules.allows(f"http://r.test{path}", "nadird") is allowed


def test_crawl_delay_request_rate_and_sitemaps() -> None:
    assert RobotsRules("rules", 0, Protego.parse(GROUPS)).delay("nadird") == 0.3
    rate = Protego.parse("User-agent: *\nRequest-rate: 2/10\nSitemap: http://r.test/s.xml\n")
    rules = RobotsRules("rules", 0, rate)
    assert rules.delay("nadird") == 5.0
    assert rules.sitemaps() == ["http://r.test/s.xml"]
    assert RobotsRules("allow_all", 0).delay("nadird") is None


@pytest.mark.parametrize(
    ("robots", "verdict"),
    [
        (STAR, "rules"),
        (404, "allow_all"),
        (401, "allow_all"),
        (500, "unreachable"),
        (503, "unreachable"),
        (429, "unreachable"),
    ],
)
async def test_status_of_robots_txt(robots: str | int, verdict: str) -> None:
    with hostile_web() as (web, hostile):
        hostile.add_host("r.test", robots=robots)
        async with fetcher() as client:
            cache = RobotsCache(client, fetch_config().robots)
            rules = await cache.rules(url(web, "r.test", "/x"))
    assert rules.verdict == verdict


async def test_redirects_followed_up_to_five_hops_then_allow_all() -> None:
    with hostile_web() as (web, hostile):
        hostile.add_host("far.test", robots="User-agent: *\nDisallow: /\n")
        far = url(web, "far.test", "/robots.txt")
        for host, hops in (("five.test", 5), ("six.test", 6)):
            chain = ["/robots.txt", *(f"/r{i}" for i in range(1, hops))]
            for here, there in zip(chain, [*chain[1:], far], strict=True):
                hostile.add_page(host, here, _redirect(there))
        hostile.add_page("loop.test", "/robots.txt", _redirect("/loop/a"))
        async with fetcher() as client:
            cache = RobotsCache(client, fetch_config().robots)
            five = await cache.rules(url(web, "five.test", "/x"))
            six = await cache.rules(url(web, "six.test", "/x"))
            loop = await cache.rules(url(web, "loop.test", "/x"))
    assert five.verdict == "rules" and not five.allows(url(web, "five.test", "/x"), "nadird")
    assert six.verdict == "allow_all"  # more than five hops: unavailable
    assert loop.verdict == "allow_all"


async def test_one_fetch_per_host_shared_and_cached() -> None:
    import asyncio

    with hostile_web(latency=0.05) as (web, hostile):
        hostile.add_host("r.test", robots=STAR)
        async with fetcher() as client:
            cache = RobotsCache(client, fetch_config().robots)
            got = await asyncio.gather(
                *(cache.rules(url(web, "r.test", f"/{i}")) for i in range(5))
            )
            again = await cache.rules(url(web, "r.test", "/other"))
        robots_hits = [e for e in web.entries() if e.path == "/robots.txt"]
    assert len(robots_hits) == 1 and cache.fetches == 1
    assert all(r is got[0] for r in [*got, again])


async def test_unreachable_host_is_recorded_with_the_network_error() -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with fetcher() as client:
        cache = RobotsCache(client, fetch_config().robots)
        rules = await cache.rules(f"http://dead.test:{port}/")
    assert rules.verdict == "failed" and rules.error is not None
    assert rules.error.startswith("connect")


def _text(body: str) -> object:
    from support.hostile import Page

    return Page(body.encode(), content_type="text/plain")


def _redirect(target: str) -> object:
    from support.hostile import Page

    return Page(b"", status=301, headers={"Location": target})


async def run_bag(web: object, host: str, paths: list[str]) -> tuple[BagRun, list[PageResult]]:
    cfg = fetch_config()
    async with fetcher() as client:
        job = Job()
        pacer = Pacer(0.0, DomainPace(adaptive=0.0), ThrottleConfig(adaptive=False))
        urls = [url(web, host, p) for p in paths]  # type: ignore[arg-type]
        run = BagRun(deque(PageTask(u, fingerprint(u), 0) for u in urls), 1, pacer)
        gate = RobotsGate(RobotsCache(client, cfg.robots), pacer, 10.0)
        processor = PageProcessor(client, job, cfg, LinkPipeline(job, cfg, DomainCounts()))
        results: list[PageResult] = []
        await crawl_bag(run, processor, results.append, gate)
    return run, results


async def test_a_bag_records_disallowed_urls_without_fetching_them() -> None:
    with hostile_web() as (web, hostile):
        hostile.add_host("r.test", robots=STAR)
        for path in ("/a", "/private/b", "/private/open/c"):
            hostile.add_html("r.test", path)
        run, results = await run_bag(web, "r.test", ["/a", "/private/b", "/private/open/c"])
        fetched = [e.path for e in web.entries()]
    assert fetched == ["/robots.txt", "/a", "/private/open/c"]
    by_path = {r.url.split(str(web.port))[1]: r for r in results}
    assert by_path["/private/b"].status == 0
    assert by_path["/private/b"].error == "robots: disallowed"
    assert by_path["/a"].status == 200 and by_path["/private/open/c"].status == 200
    assert run.returned == []


async def test_robots_5xx_hands_the_bag_back_to_rest() -> None:
    with hostile_web() as (web, hostile):
        hostile.add_host("r.test", robots=503)
        hostile.add_html("r.test", "/a")
        started = time.monotonic()
        run, results = await run_bag(web, "r.test", ["/a", "/b"])
        ended = time.monotonic()
        fetched = [e.path for e in web.entries()]
    assert fetched == ["/robots.txt"]
    assert results == []
    assert len(run.returned) == 2
    # The hold (error_ttl, 5 s) began during the bag: the rest left is
    # bracketed by when the bag ran, however long a busy machine made it.
    asked = time.monotonic()
    rest = run.pacer.rest()
    assert 5.0 - (time.monotonic() - started) <= rest <= 5.0 - (asked - ended)


def _dead_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_refused_site_is_recorded_as_refused_not_as_robots_txts_failure() -> None:
    from types import SimpleNamespace

    port = _dead_port()
    nothing = SimpleNamespace(port=port)  # a "web" on a port nothing listens on
    _run, results = await run_bag(nothing, "dead.test", ["/a"])
    assert [r.error for r in results] == [
        f"connect: the site dead.test:{port} refused the connection"
    ]
    assert results[0].error_kind == "connect"  # retried by the master


async def test_a_failure_after_robots_txt_redirected_names_robots_txt() -> None:
    port = _dead_port()
    elsewhere = f"http://127.0.0.1:{port}/robots.txt"
    with hostile_web() as (web, hostile):
        hostile.add_page("r.test", "/robots.txt", _redirect(elsewhere))
        hostile.add_html("r.test", "/a")
        _run, results = await run_bag(web, "r.test", ["/a"])
        fetched = [e.path for e in web.entries()]
    assert fetched == ["/robots.txt"]
    assert [r.error for r in results] == [
        f"connect: the site 127.0.0.1:{port} refused the connection"
        f" (robots.txt, redirected to {elsewhere})"
    ]


async def test_robots_txt_failing_through_every_proxy_is_not_kept() -> None:
    from nadird.config import ProxyConfig

    dead = ProxyConfig(urls=[f"http://127.0.0.1:{_dead_port()}"])
    with hostile_web() as (web, hostile):
        hostile.add_host("r.test", robots=STAR)
        async with fetcher(proxies=dead) as client:
            cache = RobotsCache(client, fetch_config().robots)
            rules = await cache.rules(url(web, "r.test", "/x"))
            kept = cache.cached(url(web, "r.test", "/x"))
    assert rules.verdict == "failed" and rules.failure is not None
    assert rules.failure.kind == "proxy" and "(robots.txt)" not in (rules.error or "")
    assert kept is None  # the next page asks again, through whatever proxy works then
