"""The synthetic web: a deterministic link graph, and a server that logs what it
serves (on loopback, in this process)."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from support.synthetic_web_helpers import PORT, UA, client, small_graph, split

from nadird.testing.graph import OUTSIDE_HOST
from nadird.testing.resolver import LoopbackResolver
from nadird.testing.web import (
    AccessEntry,
    SyntheticWeb,
    read_access_log,
    run_in_thread,
)


def on_host(host: str) -> Callable[[str], bool]:
    return lambda url: split(url)[0] == host


async def wait_for_entries(server: SyntheticWeb, count: int) -> list[AccessEntry]:
    deadline = time.monotonic() + 5
    while len(entries := server.entries()) < count and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    return entries


def test_same_seed_renders_the_same_web() -> None:
    a, b = small_graph(), small_graph()
    for url in a.all_pages():
        assert a.html(*split(url)) == b.html(*split(url))
        assert a.out_links(url) == b.out_links(url)
    other = small_graph(seed=1)
    assert any(a.html(*split(u)) != other.html(*split(u)) for u in a.all_pages())


def test_each_host_has_exactly_pages_html_pages() -> None:
    graph = small_graph()
    assert len(graph.all_pages()) == 3 * 40
    assert all(graph.html(*split(url)) is not None for url in graph.all_pages())
    assert graph.html("site-0.test", "/p/39") is None  # home + /p/0../p/38 is 40
    assert graph.status_of(f"http://site-0.test:{PORT}/p/39") == 404


def test_orphans_exist_but_are_not_reachable() -> None:
    graph = small_graph()
    orphans = set(graph.orphans())
    assert orphans
    assert all(graph.status_of(url) == 200 for url in orphans)
    everything = graph.reachable(graph.seeds(), lambda url: True)
    assert not orphans & set(everything)


def test_every_linked_page_is_reachable_from_its_own_home() -> None:
    graph = small_graph()
    orphans = set(graph.orphans())
    for host, seed in zip(graph.hosts, graph.seeds(), strict=True):
        same_host = graph.reachable([seed], on_host(host))
        pages = {url for url in graph.all_pages() if split(url)[0] == host} - orphans
        assert pages <= set(same_host)


def test_scope_keeps_outside_and_private_out() -> None:
    graph = small_graph()
    unrestricted = graph.reachable(graph.seeds(), lambda url: True)
    kept = graph.reachable(graph.seeds(), graph.in_site_scope)

    def outside_or_private(url: str) -> bool:
        host, path = split(url)
        return host == OUTSIDE_HOST or path.startswith("/private/")

    assert any(outside_or_private(url) for url in unrestricted)  # the test means something
    assert not any(outside_or_private(url) for url in kept)
    leaves = [url for url in kept if graph.status_of(url) == 404 or url.endswith(".pdf")]
    assert {graph.status_of(url) for url in leaves} == {200, 404}
    assert all(graph.out_links(url) == [] for url in leaves)
    assert all(graph.content_type_of(url) == "application/pdf" for url in kept if ".pdf" in url)


def test_max_depth_limits_the_crawl() -> None:
    graph = small_graph()
    shallow = graph.reachable(graph.seeds(), graph.in_site_scope, max_depth=1)
    first_hop = {url for seed in graph.seeds() for url in graph.out_links(seed)}
    assert {url for url, depth in shallow.items() if depth == 0} == set(graph.seeds())
    assert {url for url, depth in shallow.items() if depth == 1} == first_hop - set(graph.seeds())


async def test_server_serves_the_graph_and_logs_each_request(tmp_path: Path) -> None:
    log_path = tmp_path / "access.jsonl"
    with run_in_thread(small_graph(port=0), access_log_path=str(log_path)) as server:
        base = f"http://site-1.test:{server.port}"
        async with client() as session:
            async with session.get(f"{base}/p/2?x=1") as resp:
                assert resp.status == 200
                assert resp.headers["Content-Type"] == "text/html; charset=utf-8"
                assert await resp.text() == server.graph.html("site-1.test", "/p/2")
            async with session.get(f"{base}/robots.txt") as resp:
                assert await resp.text() == "User-agent: *\nDisallow: /private/\n"
            async with session.get(f"{base}/files/4.pdf") as resp:
                assert resp.headers["Content-Type"] == "application/pdf"
                assert (await resp.read()).startswith(b"%PDF-")
            async with session.get(f"{base}/missing/6") as resp:
                assert resp.status == 404
            async with session.get(f"http://{OUTSIDE_HOST}:{server.port}/ads/x") as resp:
                assert resp.status == 200
            async with session.get(f"http://127.0.0.1:{server.port}/") as resp:
                assert resp.status == 404  # unknown host
        entries = await wait_for_entries(server, 6)

    assert [(e.host, e.path, e.status) for e in entries] == [
        ("site-1.test", "/p/2?x=1", 200),
        ("site-1.test", "/robots.txt", 200),
        ("site-1.test", "/files/4.pdf", 200),
        ("site-1.test", "/missing/6", 404),
        (OUTSIDE_HOST, "/ads/x", 200),
        ("127.0.0.1", "/", 404),
    ]
    assert all(e.client == "127.0.0.1" and e.ua == UA for e in entries)
    assert all(e.t_start <= e.t_end for e in entries)
    assert read_access_log(str(log_path)) == entries


async def test_latency_delays_every_response() -> None:
    with run_in_thread(small_graph(port=0), latency=0.2) as server:
        async with client() as session, session.get(f"http://site-0.test:{server.port}/"):
            pass
        [entry] = await wait_for_entries(server, 1)
    assert entry.t_end - entry.t_start >= 0.2


# One tick of the kernel's clock at HZ=100, the coarsest usual one.
TICK = 0.011


@pytest.mark.skipif(sys.platform != "linux", reason="arrival times come from Linux's TCP_INFO")
async def test_arrival_is_when_the_request_came_not_when_the_busy_server_read_it() -> None:
    blocking = threading.Event()
    unblocked: list[float] = []
    sent: list[float] = []

    async def block(request: web.Request, host: str) -> web.StreamResponse:
        blocking.set()
        time.sleep(1.5)  # the server's loop does nothing else meanwhile
        unblocked.append(time.time())
        return web.Response(text="done")

    async def headers_sent(
        _: object, __: object, params: aiohttp.TraceRequestHeadersSentParams
    ) -> None:
        if params.url.path == "/p/1":
            sent.append(time.time())  # just before the write: see aiohttp's http_writer

    trace = aiohttp.TraceConfig()
    trace.on_request_headers_sent.append(headers_sent)
    connector = aiohttp.TCPConnector(resolver=LoopbackResolver())
    with run_in_thread(small_graph(port=0)) as server:
        server.add_route("/block", block)
        base = f"http://site-0.test:{server.port}"
        async with aiohttp.ClientSession(connector=connector, trace_configs=[trace]) as session:
            blocked = asyncio.ensure_future(session.get(f"{base}/block"))
            assert await asyncio.to_thread(blocking.wait, 5)
            async with session.get(f"{base}/p/1") as resp:  # on a second connection
                assert resp.status == 200
            (await blocked).release()
        [late] = [e for e in await wait_for_entries(server, 2) if e.path == "/p/1"]
    [sent_at] = sent
    assert late.t_start >= unblocked[0] > sent_at + 0.5  # read long after it came
    assert abs(late.t_arrived - sent_at) <= TICK


async def test_added_route_takes_precedence_and_is_logged() -> None:
    async def too_many(request: web.Request, host: str) -> web.StreamResponse:
        return web.Response(status=429, headers={"Retry-After": "1"})

    with run_in_thread(small_graph(port=0)) as server:
        server.add_route("/p/1", too_many)
        async with client() as session:
            async with session.get(f"http://site-0.test:{server.port}/p/1") as resp:
                assert (resp.status, resp.headers["Retry-After"]) == (429, "1")
            async with session.get(f"http://site-0.test:{server.port}/p/2") as resp:
                assert resp.status == 200
        entries = await wait_for_entries(server, 2)
    assert [e.status for e in entries] == [429, 200]
