"""The web console over a real master in this process (its API on a loopback
port): sign-in, sessions, CSRF on every form, what a stranger sees, paging."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from support.console_helpers import KEY, TOKEN, config, field, http, login, running_master
from yarl import URL

from nadird.common.urls import fingerprint
from nadird.config.alerts import AlertsConfig, ChannelConfig, RuleConfig
from nadird.master.console.browser_sessions import SESSION_COOKIE, Sessions
from nadird.master.service.server import Master
from nadird.store.base import PageRecord
from nadird.store.open import open_store

PAGES = ["/ui", "/ui/jobs", "/ui/domains", "/ui/workers", "/ui/dead-letters", "/ui/alerts",
         "/ui/errors", "/ui/changes"]  # fmt: skip


@dataclass
class Running:
    master: Master
    url: str


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[Running]:
    cfg = config(tmp_path)
    store = open_store(cfg.store.uri, cfg.store)
    await store.open()
    master = Master(cfg, store)
    await master.start()
    assert master.api is not None
    try:
        yield Running(master, master.api.url)
    finally:
        await master.stop()
        await store.close()


async def csrf_of(client: aiohttp.ClientSession, url: str) -> str:
    async with client.get(url + "/ui/jobs") as response:
        assert response.status == 200
        return field(await response.text(), "csrf")


async def test_without_a_session_every_page_is_401_with_the_login_form_only(
    running: Running,
) -> None:
    running.master.admit_seeds([("http://secret-domain.test/", "default")])
    async with http() as client:
        async with client.get(running.url + "/", allow_redirects=False) as response:
            assert response.status == 302 and response.headers["Location"] == "/ui"
        for path in PAGES:
            async with client.get(running.url + path) as response:
                body = await response.text()
                assert response.status == 401, path
                assert 'name="token"' in body and "secret-domain" not in body, path
                assert "default-src 'self'" in response.headers["Content-Security-Policy"]
        client.cookie_jar.update_cookies({SESSION_COOKIE: "made-up"})
        async with client.get(running.url + "/ui/domains") as response:
            assert response.status == 401 and "secret-domain" not in await response.text()
        async with client.get(running.url + "/api/stats") as response:
            assert response.status == 401


async def test_a_wrong_token_is_401_and_opens_no_session(running: Running) -> None:
    async with http() as client:
        response = await login(client, running.url, "x" * len(TOKEN))
        assert response.status == 401 and "Wrong token" in await response.text()
        assert SESSION_COOKIE not in response.cookies
        async with client.get(running.url + "/ui") as page:
            assert page.status == 401
        assert len(running.master.api.console.sessions) == 0  # type: ignore[union-attr]


async def test_the_login_form_needs_its_own_signed_nonce(running: Running) -> None:
    async with http() as client:
        posted = {"token": TOKEN}
        async with client.post(running.url + "/ui/login", data=posted) as response:
            assert response.status == 403
        made_up = {"token": TOKEN, "nonce": "abc.123.def"}
        client.cookie_jar.update_cookies({"nadird_login": "abc.123.def"})
        async with client.post(running.url + "/ui/login", data=made_up) as response:
            assert response.status == 403


async def test_signing_in_sets_a_strict_httponly_cookie_that_reads_the_api(
    running: Running,
) -> None:
    running.master.admit_seeds([("http://shown.test/a", "default")])
    async with http() as client:
        response = await login(client, running.url)
        assert response.status == 303 and response.headers["Location"] == "/ui"
        cookie = response.cookies[SESSION_COOKIE]
        assert cookie["httponly"] and cookie["samesite"] == "Strict"
        assert int(cookie["max-age"]) == 43200 and len(cookie.value) >= 40
        async with client.get(running.url + "/ui") as page:
            html = await page.text()
            assert page.status == 200 and 'data-stat="queued">1<' in html
        async with client.get(running.url + "/ui/domains") as page:
            assert "shown.test" in await page.text()
        async with client.get(running.url + "/api/stats") as stats:
            assert stats.status == 200 and (await stats.json())["queued"] == 1
        # The session reads; it changes nothing through the API (no CSRF there).
        async with client.post(running.url + "/api/jobs/default/pause") as refused:
            assert refused.status == 401
        assert not running.master.jobs()["default"].paused


async def test_every_form_without_or_with_a_wrong_csrf_token_is_403(running: Running) -> None:
    forms = {
        "/ui/jobs/default/pause": {},
        "/ui/jobs/default/resume": {},
        "/ui/seeds": {"job": "default", "urls": "http://new.test/"},
        "/ui/dead-letters/retry": {"all": "1"},
        "/ui/logout": {},
    }
    async with http() as client:
        await login(client, running.url)
        good = await csrf_of(client, running.url)
        for path, data in forms.items():
            for csrf in (None, "x" * len(good), good[:-1]):
                body = data if csrf is None else {**data, "csrf": csrf}
                async with client.post(running.url + path, data=body) as response:
                    assert response.status == 403, (path, csrf)
        assert not running.master.jobs()["default"].paused
        assert running.master.status()["queued"] == 0  # the seed was not admitted
        async with client.get(running.url + "/ui") as page:
            assert page.status == 200  # not logged out
    # No session at all: 401, not 403.
    async with http() as stranger, stranger.post(running.url + "/ui/jobs/default/pause") as r:
        assert r.status == 401


async def test_pause_resume_and_seeds_through_the_forms(running: Running) -> None:
    async with http() as client:
        await login(client, running.url)
        csrf = await csrf_of(client, running.url)
        async with client.post(running.url + "/ui/jobs/default/pause", data={"csrf": csrf}) as r:
            assert r.status == 200 and "Job default paused." in await r.text()
            assert r.url.path == "/ui/jobs"
        assert running.master.jobs()["default"].paused
        async with client.post(running.url + "/ui/jobs/default/resume", data={"csrf": csrf}) as r:
            assert "Job default resumed." in await r.text()
        assert not running.master.jobs()["default"].paused
        urls = "http://a.test/1\nhttp://b.test/2\njavascript:<script>alert(1)</script>\n"
        data = {"csrf": csrf, "job": "default", "urls": urls}
        async with client.post(running.url + "/ui/seeds", data=data) as r:
            html = await r.text()
        assert "2 of 3 URLs admitted" in html
        assert "<script>alert" not in html and "&lt;script&gt;alert(1)" in html
        assert running.master.status()["queued"] == 2
        async with client.post(running.url + "/ui/jobs/nope/pause", data={"csrf": csrf}) as r:
            assert r.status == 404


async def test_logout_ends_the_session_for_its_cookie(running: Running) -> None:
    async with http() as client:
        await login(client, running.url)
        csrf = await csrf_of(client, running.url)
        session_id = client.cookie_jar.filter_cookies(URL(running.url))[SESSION_COOKIE].value
        async with client.post(running.url + "/ui/logout", data={"csrf": csrf}) as response:
            assert response.status == 200 and response.url.path == "/ui/login"
    async with http() as replay:  # the old cookie, sent again
        replay.cookie_jar.update_cookies({SESSION_COOKIE: session_id})
        async with replay.get(running.url + "/ui") as page:
            assert page.status == 401


def dead_letter(master: Master, url: str) -> bytes:
    """Dead-letter a queued URL as the core does when its tries run out."""
    frontier = master.core.frontier
    ds = frontier.pop_ready(time.monotonic() + 3600)
    assert ds is not None
    [row] = frontier.take(ds, 1)
    assert row.url == url
    frontier.dead(row, "http: status 500", 4)
    frontier.db.commit()
    return row.fp


async def test_a_dead_letter_is_listed_and_marked_for_retry(running: Running) -> None:
    url = "http://broken.test/x"
    running.master.admit_seeds([(url, "default")])
    fp = dead_letter(running.master, url)
    assert fp == fingerprint(url)
    async with http() as client:
        await login(client, running.url)
        async with client.get(running.url + "/ui/dead-letters") as page:
            html = await page.text()
        assert url in html and "http: status 500" in html
        csrf, shown = field(html, "csrf"), field(html, "fp")
        assert shown == fp.hex()
        async with client.post(
            running.url + "/ui/dead-letters/retry", data={"csrf": csrf, "fp": shown}
        ) as response:
            assert "1 dead letters marked for retry" in await response.text()
    [letter] = running.master.core.frontier.db.dead_letters()
    assert letter.requeue


async def test_domains_are_sorted_and_paged_on_the_server(running: Running) -> None:
    core = running.master.core
    for n in range(120):  # domain d{n} gets n % 7 + 1 URLs
        urls = [f"http://d{n:03}.test/{i}" for i in range(n % 7 + 1)]
        core.admission.admit("default", urls, [fingerprint(u) for u in urls], 0)
    core.frontier.db.commit()
    for n in range(5):
        core.page_log.failures[f"d{n:03}.test"] = 10 - n
    async with http() as client:
        await login(client, running.url)

        async def names(query: str) -> list[str]:
            async with client.get(running.url + "/ui/domains" + query) as page:
                return re.findall(r"<td><a [^>]+>(d\d{3}\.test)</a></td>", await page.text())

        by_queue = await names("?sort=queue")
        assert len(by_queue) == 50
        assert by_queue[:3] == ["d006.test", "d013.test", "d020.test"]  # 7 URLs each, by name
        assert await names("?sort=name&page=3") == [f"d{n:03}.test" for n in range(100, 120)]
        assert (await names("?sort=errors"))[:5] == [f"d{n:03}.test" for n in range(5)]
        assert await names("?sort=name&page=99") == await names("?sort=name&page=3")
        assert await names("?sort=<x>&page=-1") == by_queue  # bad input: the defaults


def test_sessions_expire_and_the_oldest_goes_past_the_bound() -> None:
    now = [1000.0]
    sessions = Sessions(ttl=60.0, clock=lambda: now[0])
    first = sessions.create(KEY)
    assert sessions.get(first.id, KEY) == first and first.csrf != first.id
    now[0] += 59.9
    assert sessions.get(first.id, KEY) is not None
    now[0] += 0.2
    assert sessions.get(first.id, KEY) is None and len(sessions) == 0
    ids = [sessions.create(KEY).id for _ in range(300)]
    assert len(sessions) == 256 and sessions.get(ids[0], KEY) is None
    assert sessions.get(ids[-1], KEY)
    nonce = sessions.login_nonce()
    assert sessions.login_nonce_ok(nonce, nonce)
    assert not sessions.login_nonce_ok(nonce, nonce + "x")
    assert not Sessions(60.0).login_nonce_ok(nonce, nonce)  # another process's key
    now[0] += 601
    assert not sessions.login_nonce_ok(nonce, nonce)


async def test_the_changes_page_lists_the_stores_latest_changes(running: Running) -> None:
    def version(price: int, at: float) -> PageRecord:
        url = "http://shop.test/kettle"
        return PageRecord(
            url=url,
            fp=fingerprint(url),
            final_url=url,
            depth=0,
            job="default",
            fetched_at=at,
            status=200,
            data={"price": price, "title": f"<b>Kettle {price}</b>"},
            signature=f"s{price}",
        )

    store = running.master.writer.store
    await store.write([version(299, 100.0)])
    await store.write([version(259, 200.0)])
    async with http() as client:
        await login(client, running.url)
        async with client.get(running.url + "/ui/changes") as page:
            html = await page.text()
    assert "http://shop.test/kettle" in html and "299 → 259" in html
    assert "<b>Kettle" not in html and "&#34;&lt;b&gt;Kettle 259&lt;/b&gt;&#34;" in html


async def test_the_alerts_page_shows_open_and_recent_alerts(tmp_path: Path) -> None:
    received: list[dict[str, object]] = []

    async def hook(request: web.Request) -> web.Response:
        received.append(await request.json())
        return web.Response(text="ok")

    receiver = web.Application()
    receiver.router.add_post("/hook", hook)
    runner = web.AppRunner(receiver)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    alerts = AlertsConfig(
        channels={"hook": ChannelConfig(type="webhook", url=f"http://127.0.0.1:{port}/hook")},
        rules=[RuleConfig(type="stall", channels=["hook"], after=0.3)],
    )
    cfg = config(tmp_path, alerts)
    store = open_store(cfg.store.uri, cfg.store)
    await store.open()
    master = Master(cfg, store)
    await master.start()
    assert master.api is not None
    try:
        master.admit_seeds([("http://never-fetched.test/", "default")])  # no worker: a stall
        deadline = time.monotonic() + 10
        while not master.open_alerts() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        async with http() as client:
            await login(client, master.api.url)
            async with client.get(master.api.url + "/ui/alerts") as page:
                html = await page.text()
    finally:
        await master.stop()
        await store.close()
        await runner.cleanup()
    opened, recent = html.split("<h2>Recent")
    assert "<td>stall</td><td>warning</td><td>crawl</td>" in opened
    assert "<td>stall</td><td>crawl</td>" in recent and "<td>firing</td>" in recent
    assert received  # the same alert went to its channel


async def test_the_session_cookie_alone_opens_and_changes_nothing(running: Running) -> None:
    """Browsers send the cookie to every port of 127.0.0.1: a server there
    that gets it must not be able to use it (without the origin's key)."""
    async with http() as client:
        await login(client, running.url)
        csrf = await csrf_of(client, running.url)
        stolen = client.cookie_jar.filter_cookies(URL(running.url))[SESSION_COOKIE].value
    for key in (None, "x" * 43, KEY[:-1] + "j"):
        async with http(key=key) as thief:
            thief.cookie_jar.update_cookies({SESSION_COOKIE: stolen})
            async with thief.get(running.url + "/ui/jobs") as page:
                html = await page.text()
                assert page.status == 401 and 'name="csrf"' not in html, key
                assert "data-job" not in html
            async with thief.get(running.url + "/api/stats") as stats:
                assert stats.status == 401, key
            for path in ("/ui/jobs/default/pause", "/api/jobs/default/pause"):
                async with thief.post(running.url + path, data={"csrf": csrf}) as refused:
                    assert refused.status == 401, (key, path)
    assert not running.master.jobs()["default"].paused


async def test_signing_in_without_the_origins_key_opens_no_session(running: Running) -> None:
    for key in (None, "short", "k" * 42 + "!"):
        async with http(key=key) as client:
            response = await login(client, running.url)
            assert response.status == 400 and SESSION_COOKIE not in response.cookies, key
    assert len(running.master.api.console.sessions) == 0  # type: ignore[union-attr]


async def test_ui_with_a_slash_redirects_and_the_first_visit_is_a_prompt(running: Running) -> None:
    async with http() as client:
        async with client.get(running.url + "/ui/", allow_redirects=False) as response:
            assert response.status == 302 and response.headers["Location"] == "/ui"
        async with client.get(running.url + "/ui") as page:
            html = await page.text()
        assert page.status == 401 and '<p class="hint">Paste the API token' in html
        assert 'class="problem"' not in html
        response = await login(client, running.url, "x" * len(TOKEN))
        assert '<p class="problem" role="alert">Wrong token.' in await response.text()


async def test_done_domains_are_listed_after_a_restart(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    async with running_master(cfg) as master:
        master.admit_seeds([("http://done.test/x", "default")])
        dead_letter(master, "http://done.test/x")
    async with running_master(cfg) as master, http() as client:
        assert master.api is not None
        await login(client, master.api.url)
        async with client.get(master.api.url + "/ui/domains") as page:
            html = await page.text()
        assert '<a href="/ui/domain?d=done.test">done.test</a>' in html and "(1 in all)" in html
