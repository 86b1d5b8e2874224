"""The renderer in this process, against the synthetic web's JavaScript pages.

Skipped without Playwright or Chromium (.ci/run installs both).
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from support.jspages import (
    FIELDS,
    LIST_FIELDS,
    PLACEHOLDER_PRICE,
    READY,
    JsSite,
    browser_missing,
    probe_path,
    probe_results,
)
from support.legacy import FIELDS as TEXT_FIELDS
from support.legacy import TEXTS, LegacySite

from nadird.common.typecheck import build
from nadird.common.urls import canonicalize, fingerprint
from nadird.config import FetchConfig, RenderConfig
from nadird.items.schema import ERRORS, VALID, invalid_fields
from nadird.job.spec import Job
from nadird.protocol.messages import PageResult
from nadird.testing.web import SyntheticWeb, run_in_thread
from nadird.worker.fetch.fetcher import Fetcher
from nadird.worker.follow.filter import DomainCounts, LinkPipeline
from nadird.worker.pages import PageProcessor, PageTask
from nadird.worker.render.exchange import Document, Fulfil, Reply, SubRequest, WaitRules
from nadird.worker.render.step import RenderStep
from nadird.worker.render.subrequests import SubrequestPolicy

MISSING = browser_missing()
# Every test here drives a real browser process.
pytestmark = [pytest.mark.slow, pytest.mark.skipif(MISSING is not None, reason=MISSING or "")]

if MISSING is None:
    from nadird.worker.render.renderer import Renderer

PINNED = {"*.test": "127.0.0.1"}


@pytest.fixture(scope="module")
def site() -> Iterator[tuple[SyntheticWeb, JsSite]]:
    js = JsSite(items=3)
    with run_in_thread() as web:
        js.install(web)
        LegacySite().install(web)
        yield web, js


def job(**keys: Any) -> Job:
    return build(Job, {"fields": FIELDS, "render_wait_for": READY, "render_max_wait": 5, **keys})


@asynccontextmanager
async def parts(
    fetch: FetchConfig | None = None, **render: Any
) -> AsyncIterator[tuple[Fetcher, Renderer]]:
    fetch = fetch or FetchConfig(resolve=PINNED, allow_private=True)
    fetcher = Fetcher(fetch)
    renderer = Renderer(RenderConfig(**render), fetch.user_agent)
    await fetcher.start()
    await renderer.start()
    try:
        yield fetcher, renderer
    finally:
        await renderer.close()
        await fetcher.close()


async def process(
    fetcher: Fetcher, renderer: Renderer | None, the_job: Job, url: str
) -> PageResult:
    fetch = fetcher.config
    step = None
    if renderer is not None:
        policy = SubrequestPolicy(fetcher, the_job, fetch.render, "js.test", cache=renderer.cache)
        step = RenderStep(renderer, the_job, policy, fetch)
    links = LinkPipeline(the_job, fetch, DomainCounts())
    processor = PageProcessor(fetcher, the_job, fetch, links, None, step)
    url = canonicalize(url)
    processed = await processor.process(PageTask(url, fingerprint(url), 0))
    assert processed.result is not None
    return processed.result


def paths(web: SyntheticWeb, since: int = 0) -> list[str]:
    return [e.path for e in web.entries()[since:]]


async def test_the_rendered_dom_goes_through_the_same_rules(
    site: tuple[SyntheticWeb, JsSite],
) -> None:
    web, js = site
    async with parts() as (fetcher, renderer):
        plain = await process(fetcher, None, job(), js.url("/js/item/1"))
        assert plain.data == {"title": None, "price": None} and plain.error is None
        before = len(web.entries())
        home = await process(fetcher, renderer, job(render=True), js.seed())
        item = await process(fetcher, renderer, job(render=True), js.url("/js/item/1"))
    assert item.error is None and item.data == JsSite.item_fields(1)
    assert home.data["title"] == "JS shop"
    assert set(home.links) == {canonicalize(js.url(p)) for p in ["/js/static", *js.item_paths()]}
    assert item.body is not None and b"11.99" in item.body  # the stored body is the DOM
    fetched = paths(web, before)
    # The page itself once (the browser is handed those bytes), then its scripts' requests;
    # images blocked, the third-party tracker never asked.
    assert fetched.count("/js/item/1") == 1 and "/js/api/item/1" in fetched
    # The script both pages load was asked for once (the worker's cache).
    assert fetched.count("/js/app.js") == 1 and renderer.cache.hits == 1
    assert not [p for p in fetched if p.startswith("/js/img/") or p == "/js/tracker.js"]


async def test_auto_renders_only_pages_missing_a_required_field(
    site: tuple[SyntheticWeb, JsSite],
) -> None:
    _web, js = site
    auto = job(render="auto", render_when_missing=["title"])
    async with parts() as (fetcher, renderer):
        static = await process(fetcher, renderer, auto, js.url("/js/static"))
        assert renderer.rendered == 0  # its title is in the HTML; price is not required
        assert static.data == {"title": "About", "price": None}
        item = await process(fetcher, renderer, auto, js.url("/js/item/2"))
        assert renderer.rendered == 1
    assert item.data == JsSite.item_fields(2)
    # The store can tell which pages came from a browser.
    assert (static.rendered, item.rendered) == (False, True)


# A numeric price: the placeholder "--" the HTML shows fails it.
PRICE_SCHEMA = {"price": {"type": "number", "process": ["strip", "number"]}}


async def test_render_when_invalid_renders_an_item_that_fails_its_schema(
    site: tuple[SyntheticWeb, JsSite],
) -> None:
    web, js = site
    fixed, stuck = js.url("/js/priced?price=12.99"), js.url("/js/priced?price=soon")
    retry = job(render="auto", schema=PRICE_SCHEMA, render_when_invalid=True)
    async with parts() as (fetcher, renderer):
        before = len(web.entries())
        valid = await process(fetcher, renderer, retry, fixed)
        assert renderer.rendered == 1
        still = await process(fetcher, renderer, retry, stuck)
        assert renderer.rendered == 2
        # Without the key the invalid item is stored as the HTML gave it.
        plain = await process(fetcher, renderer, job(render="auto", schema=PRICE_SCHEMA), fixed)
        assert renderer.rendered == 2
    fetched = paths(web, before)
    # Each page was fetched once (the browser got the fetched bytes); only
    # the rendered ones asked the price API.
    assert fetched.count("/js/priced?price=12.99") == 2  # retry, then plain
    assert fetched.count("/js/api/price?price=12.99") == 1
    assert fetched.count("/js/api/price?price=soon") == 1
    assert (valid.rendered, valid.error) == (True, None)
    assert valid.data["price"] == 12.99 and valid.data.get(VALID) is not False
    assert still.rendered is True and still.data[VALID] is False
    assert invalid_fields(still.data) == ["price"] and still.data[ERRORS]["price"]
    assert plain.rendered is False and plain.data[VALID] is False
    assert plain.data["price"] == PLACEHOLDER_PRICE and plain.data[ERRORS]["price"]


async def test_sub_requests_obey_the_workers_address_policy(
    site: tuple[SyntheticWeb, JsSite],
) -> None:
    web, js = site
    port = web.port
    # Only 127.0.0.1 is allowed; inside.test is pinned to another loopback
    # address, which the policy refuses (as it would a cloud metadata address).
    fetch = FetchConfig(
        resolve={"inside.test": "127.0.0.2", **PINNED},
        allow_private=False,
        allow_networks=["127.0.0.1/32"],
    )
    targets = {
        "/js/secret": "ok",  # first party
        f"http://outside.test:{port}/js/secret": "ok",  # third party, allowed below
        f"http://inside.test:{port}/js/secret": "failed",  # refused address (pinned name)
        f"http://127.0.0.2:{port}/js/secret": "failed",  # refused address (IP literal)
    }
    page_url = js.url(probe_path(*targets))
    open_job = job(render=True, render_third_party=True)
    async with parts(fetch) as (fetcher, renderer):
        outcome = await fetcher.fetch(page_url)
        policy = SubrequestPolicy(fetcher, open_job, fetch.render, "js.test")
        requests = policy.page()
        document = Document(outcome.final_url, 200, "text/html", outcome.body)
        html = await renderer.render(document, WaitRules(selector=READY), requests)
        assert probe_results(html) == targets
        assert requests.blocked == {"blocked_address": 2}
        # The job's default: third-party sub-requests are not made at all.
        closed = SubrequestPolicy(fetcher, job(render=True), fetch.render, "js.test").page()
        html = await renderer.render(document, WaitRules(selector=READY), closed)
    assert probe_results(html)[f"http://outside.test:{port}/js/secret"] == "failed"
    assert closed.blocked == {"third_party": 3}  # refused before any address is looked at
    # Nothing but the allowed address was ever connected to.
    assert {e.client for e in web.entries()} == {"127.0.0.1"}


async def test_the_browser_cannot_reach_the_network_by_itself(
    site: tuple[SyntheticWeb, JsSite],
) -> None:
    """Without routing (a request interception would miss), the launch flags
    leave Chromium no name resolution and no connection of its own."""
    from playwright.async_api import Error, async_playwright

    from nadird.worker.render.browser import launch

    web, js = site
    before = len(web.entries())
    async with async_playwright() as playwright:
        handle = await launch(playwright, RenderConfig(), 1)
        try:
            page = await handle.browser.new_page()
            for url in (js.url("/js/secret"), f"http://127.0.0.1:{web.port}/js/secret"):
                with pytest.raises(Error):
                    await page.goto(url, timeout=5000)
        finally:
            await handle.browser.close()
            handle.dead_port.close()
    assert paths(web, before) == []


NEVER_SETTLING = [
    ("/js/never", {"render_wait": "networkidle", "render_wait_for": None}),  # polls forever
    ("/js/never", {}),  # never marks itself ready
    ("/js/spin", {}),  # a script that never returns
]


async def test_a_page_that_never_settles_is_cut_off_and_recorded(
    site: tuple[SyntheticWeb, JsSite],
) -> None:
    _web, js = site
    async with parts() as (fetcher, renderer):
        for path, wait in NEVER_SETTLING:
            slow = job(render=True, render_max_wait=1.0, **wait)
            started = time.monotonic()
            result = await process(fetcher, renderer, slow, js.url(path))
            took = time.monotonic() - started
            assert result.error is not None, (path, wait)
            assert result.error.startswith("render_timeout:"), result.error
            assert result.status == 0 and 1.0 <= took < 4.0, (path, wait, took)
        # The same browser goes on rendering the next page.
        assert renderer.restarts == {}
        after = await process(fetcher, renderer, job(render=True), js.url("/js/item/0"))
    assert after.data == JsSite.item_fields(0)


def after_load(**keys: Any) -> Job:
    """A job with the default wait (settle) and no ready mark to wait for."""
    return job(render=True, fields=LIST_FIELDS, render_wait_for=None, **keys)


async def test_the_default_wait_sees_what_scripts_build_after_load(
    site: tuple[SyntheticWeb, JsSite],
) -> None:
    web, js = site
    items = js.item_titles()
    async with parts() as (fetcher, renderer):
        timer = await process(fetcher, renderer, after_load(), js.url("/js/late"))
        before = len(web.entries())
        fetched = await process(fetcher, renderer, after_load(), js.url("/js/fetched"))
        asked = paths(web, before)
        # A request in flight keeps the page unsettled, however still its DOM.
        slow_api = await process(fetcher, renderer, after_load(), js.url("/js/fetched?wait=900"))
        # What the load event alone gives: the list is still empty (a later
        # timer than above, so that a busy machine cannot make it fire first).
        loaded = after_load(render_wait="load")
        at_load = await process(fetcher, renderer, loaded, js.url("/js/late?delay=3000"))
        # Items 0.6 s apart: each change restarts the quiet period (1 s here),
        # so the page settles 1 s after the last one, with no request since load.
        patient = after_load(render_quiet=1.0)
        paced = await process(fetcher, renderer, patient, js.url("/js/late?delay=600&step=600"))
    assert timer.error is None and timer.data == {"title": "Late list", "items": items}
    assert fetched.error is None and fetched.data == {"title": "Fetched list", "items": items}
    assert asked == ["/js/fetched", "/js/api/items"]
    assert slow_api.error is None and slow_api.data["items"] == items
    assert at_load.error is None and at_load.data == {"title": "Late list", "items": None}
    assert paced.error is None and paced.data["items"] == items


async def test_a_page_that_never_stops_changing_is_taken_as_it_is_at_max_wait(
    site: tuple[SyntheticWeb, JsSite],
) -> None:
    _web, js = site
    clock = {"title": [{"css": "h1.title"}], "clock": [{"css": "#clock"}]}
    # Long enough for the load event on a busy machine: a page that never
    # loads is a render_timeout in every mode.
    ticking = job(render=True, fields=clock, render_wait_for=None, render_max_wait=3.0)
    async with parts() as (fetcher, renderer):
        started = time.monotonic()
        result = await process(fetcher, renderer, ticking, js.url("/js/ticking"))
        took = time.monotonic() - started
    # Not an error: the page as a person reads it when the wait runs out.
    assert result.error is None and result.rendered, result.error
    assert result.data["title"] == "Clock" and str(result.data["clock"]).startswith("20")
    assert 3.0 <= took < 6.5, took


async def test_an_undeclared_legacy_page_is_rendered_in_the_encoding_it_is_read_in(
    site: tuple[SyntheticWeb, JsSite],
) -> None:
    _web, js = site
    the_job = job(render=True, fields=TEXT_FIELDS, render_wait_for=None, render_wait="load")
    async with parts() as (fetcher, renderer):
        for text in TEXTS:
            result = await process(fetcher, renderer, the_job, js.url(f"/legacy/{text.name}"))
            assert result.error is None and result.rendered
            assert result.data == text.fields(), text.name


async def _quick(renderer: Renderer, answer: Any = None) -> str:
    async def nothing(request: SubRequest) -> Reply:
        return Fulfil(404, "text/plain", b"")

    body = b"<body><script>document.body.setAttribute('data-ready','1')</script><p>hi</p></body>"
    document = Document("http://quick.test/", 200, "text/html", body)
    return await renderer.render(document, WaitRules(selector=READY), answer or nothing)


async def test_the_browser_is_replaced_after_n_pages_and_above_the_memory_limit() -> None:
    async with parts(restart_after_pages=2, max_memory_mb=0) as (_fetcher, renderer):
        pids = []
        for _ in range(4):
            pids.append(renderer.pid)  # None once retired, until the next page starts one
            assert "<p>hi</p>" in await _quick(renderer)
        assert renderer.restarts == {"pages": 2}
        assert pids[0] == pids[1] != pids[3] and pids[2] is None
    async with parts(max_memory_mb=1, memory_check_interval=0) as (_fetcher, renderer):
        await _quick(renderer)
        assert renderer.restarts == {"memory": 1} and renderer.pid is None


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="the browser's pid is read from /proc")
async def test_a_browser_killed_mid_render_is_replaced_and_the_page_retried() -> None:
    async with parts() as (_fetcher, renderer):
        victim = renderer.pid
        assert victim is not None
        calls = 0

        async def kill_first(request: SubRequest) -> Reply:
            nonlocal calls
            calls += 1
            if calls == 1:
                os.kill(victim, signal.SIGKILL)
                await asyncio.sleep(1.0)
            return Fulfil(200, "application/javascript", b"")

        body = (
            b"<script src='/a.js'></script><body>"
            b"<script>document.body.setAttribute('data-ready','1')</script><p>hi</p></body>"
        )
        document = Document("http://crash.test/", 200, "text/html", body)
        html = await renderer.render(document, WaitRules(selector=READY), kill_first)
        assert "<p>hi</p>" in html
        assert renderer.restarts["crashed"] == 1
        assert renderer.pid not in (None, victim)
        assert "<p>hi</p>" in await _quick(renderer)
