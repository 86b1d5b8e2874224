"""The console in Simplified Chinese and in English, over a real master in
this process (its API on a loopback port): Accept-Language, the switch link
and its cookie, console.language, notices and error pages."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import AsyncIterator
from html.parser import HTMLParser
from pathlib import Path

import aiohttp
import pytest
from support.console_helpers import TOKEN, config, field, http, login, running_master

from nadird.config import ConsoleConfig
from nadird.master.console.app import NAV, PREFIX
from nadird.master.console.catalog import EN, ZH_CN
from nadird.master.console.language import LANG_COOKIE
from nadird.master.service.server import Master

ZH = {"Accept-Language": "zh-CN,zh;q=0.9"}
EN_US = {"Accept-Language": "en-US,en;q=0.9"}
PAGES = [PREFIX + path for path, _ in NAV]
# Latin words a Chinese page may show: names, units, data of the test.
LATIN_OK = {
    "nadird", "m1", "URL", "API", "CSRF", "robots", "txt", "CPU", "RSS", "MB", "pid", "UTC",
    "xx", "English", "default", "test", "http", "https",
}  # fmt: skip


class VisibleText(HTMLParser):
    """The text a reader sees, without <code> (config keys, commands) and scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("code", "script", "style"):
            self._hidden += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "script", "style"):
            self._hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def latin_words(html: str) -> set[str]:
    parser = VisibleText()
    parser.feed(html)
    return set(re.findall(r"[A-Za-z][A-Za-z0-9]+", " ".join(parser.parts))) - LATIN_OK


@pytest.fixture
async def master(tmp_path: Path) -> AsyncIterator[Master]:
    async with running_master(config(tmp_path)) as running:
        running.admit_seeds([("http://a.test/", "default")])
        yield running


def url_of(master: Master) -> str:
    assert master.api is not None
    return master.api.url


async def csrf_of(client: aiohttp.ClientSession, url: str) -> str:
    async with client.get(url + "/ui/jobs") as response:
        return field(await response.text(), "csrf")


async def test_a_chinese_browser_gets_every_page_in_chinese(master: Master) -> None:
    url = url_of(master)
    async with http() as client:
        async with client.get(url + "/ui", headers=ZH) as response:
            html = await response.text()
            assert response.status == 401 and '<html lang="zh-CN">' in html
            assert ZH_CN["login.needed"] in html and ZH_CN["login.token"] in html
            assert response.headers["Content-Language"] == "zh-CN"
            assert "Accept-Language" in response.headers["Vary"]
        assert latin_words(html) == set()
        await login(client, url)
        for path in PAGES:
            async with client.get(url + path, headers=ZH) as response:
                html = await response.text()
                assert response.status == 200, path
            assert ZH_CN["nav.dead_letters"] in html and ZH_CN["base.logout"] in html, path
            assert EN["base.logout"] not in html, path
            assert latin_words(html) == set(), path  # no English left on the page
        async with client.get(url + "/ui/domains", headers=ZH) as response:
            html = await response.text()
        assert ZH_CN["domains.next_allowed"] in html and ZH_CN["robots.none"] in html
        assert ZH_CN["state.ready"] in html or ZH_CN["state.waiting"] in html
        async with client.get(url + "/ui", headers=ZH) as response:
            html = await response.text()
        # The words console.js writes when it refreshes the numbers.
        assert f'data-done="{ZH_CN["overview.done"]}"' in html
        assert f'data-cannot-write="{ZH_CN["overview.cannot_write"]}"' in html


async def test_any_other_browser_gets_english(master: Master) -> None:
    url = url_of(master)
    async with http() as client:
        for headers in (EN_US, {"Accept-Language": "fr-FR,zh-TW;q=0.8"}, {}):
            async with client.get(url + "/ui/login", headers=headers) as response:
                html = await response.text()
                assert '<html lang="en">' in html and "API token" in html, headers
                assert ZH_CN["login.token"] not in html
        await login(client, url)
        async with client.get(url + "/ui/domains", headers=EN_US) as response:
            html = await response.text()
        assert "Next allowed in" in html and "not passed on yet" in html
        assert ZH_CN["nav.domains"] not in html


async def test_the_switch_link_sets_a_cookie_that_beats_the_browser(master: Master) -> None:
    url = url_of(master)
    async with http() as client:
        async with client.get(url + "/ui/login", headers=EN_US) as response:
            html = await response.text()
        link = re.search(r'<a class="lang" href="([^"]+)"', html)
        assert link is not None and link.group(1) == "/ui/login?lang=zh-CN"
        async with client.get(url + link.group(1), headers=EN_US) as response:
            assert ZH_CN["login.title"] in await response.text()
            cookie = response.cookies[LANG_COOKIE]
            assert cookie.value == "zh-CN" and cookie["path"] == "/"
        await login(client, url)
        async with client.get(url + "/ui/workers", headers=EN_US) as response:
            html = await response.text()
            assert ZH_CN["workers.empty"] in html  # the cookie, not the browser
        back = re.search(r'<a class="lang" href="([^"]+)"', html)
        assert back is not None and back.group(1) == "/ui/workers?lang=en"
        async with client.get(url + "/ui/domains?sort=name&page=1&lang=en", headers=ZH) as r:
            html = await r.text()
            assert "Sorted by" in html and r.cookies[LANG_COOKIE].value == "en"
        assert "/ui/domains?sort=name&amp;page=1&amp;lang=zh-CN" in html  # the rest kept
        async with client.get(url + "/ui/workers", headers=ZH) as response:
            assert "No worker has connected." in await response.text()


async def test_notices_and_error_pages_are_in_the_pages_language(master: Master) -> None:
    url = url_of(master)
    async with http() as client:
        await login(client, url)
        csrf = await csrf_of(client, url)
        pause = url + "/ui/jobs/default/pause"
        async with client.post(pause, data={"csrf": csrf}, headers=ZH) as response:
            assert response.status == 200 and "任务 default 已暂停。" in await response.text()
        async with client.post(pause, data={"csrf": "wrong"}, headers=ZH) as response:
            html = await response.text()
            assert response.status == 403 and ZH_CN["error.csrf"] in html
            assert ZH_CN["nav.jobs"] in html  # the error page has the menu of a session
        async with client.post(url + "/ui/jobs/nope/pause", data={"csrf": csrf}, headers=ZH) as r:
            assert r.status == 404 and ZH_CN["error.unknown_job"] in await r.text()
        broken = {**ZH, "Content-Type": "multipart/form-data"}  # no boundary: unreadable
        async with client.post(pause, data=b"csrf=x", headers=broken) as response:
            assert response.status == 400 and ZH_CN["error.bad_form"] in await response.text()
        async with client.post(url + "/ui/login", data=b"\xff=1", headers=broken) as response:
            assert response.status == 400
        async with client.get(url + "/ui/no-such-page", headers=ZH) as response:
            html = await response.text()
            assert response.status == 404 and ZH_CN["error.not_found"] in html
            assert "错误 404" in html
        async with client.get(url + "/ui/no-such-page", headers=EN_US) as response:
            assert response.status == 404 and "No such page." in await response.text()
        async with client.get(url + "/api/no-such-route", headers=ZH) as response:
            assert response.status == 404  # the API is not the console's: untouched
            assert ZH_CN["error.not_found"] not in await response.text()
    async with http() as stranger:
        response = await login(stranger, url, "x" * len(TOKEN))
        # login() does not send the header: a wrong token in English...
        assert response.status == 401 and "Wrong token." in await response.text()
        async with stranger.get(url + "/ui/login", headers=ZH) as form:
            nonce = field(await form.text(), "nonce")
        posted = {"nonce": nonce, "token": "y" * len(TOKEN)}
        async with stranger.post(url + "/ui/login", data=posted, headers=ZH) as response:
            assert response.status == 401 and ZH_CN["login.wrong"] in await response.text()


async def test_the_configured_language_beats_the_browser(tmp_path: Path) -> None:
    cfg = dataclasses.replace(config(tmp_path), console=ConsoleConfig(language="zh-CN"))
    async with running_master(cfg) as master, http() as client:
        url = url_of(master)
        async with client.get(url + "/ui/login", headers=EN_US) as response:
            assert ZH_CN["login.title"] in await response.text()
            assert LANG_COOKIE not in response.cookies  # no choice made: no cookie
        async with client.get(url + "/ui/login?lang=en", headers=EN_US) as response:
            assert "Sign in" in await response.text()  # the switch still works
