"""The console in headless Chromium against a master in this process, on
what an operator must be able to trust: a page served from another loopback
port, opened while signed in, cannot make the console do anything, and the
session cookie it makes the browser send there is refused alone; crawled
text holding bidi controls is shown as escapes, not obeyed.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from support.console_helpers import TOKEN, config, http, running_master
from support.jspages import browser_missing

from nadird.common.urls import fingerprint
from nadird.master.console.browser_sessions import SESSION_COOKIE
from nadird.master.service.server import Master
from nadird.store.base import PageRecord

MISSING = browser_missing()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(MISSING is not None, reason=MISSING or "")]

# A page of another origin (another port of 127.0.0.1) trying everything a
# page can: a request to its own server (which gets the host's cookies), the
# management API and the console's forms with the browser's cookies, with a
# made-up console key, and a form posted into a frame.
HOSTILE_PAGE = """<!doctype html><html><body>
<iframe name="sink"></iframe>
<form id="pause" method="post" target="sink" action="{master}/ui/jobs/default/pause">
<input name="csrf" value="guess"></form>
<script>
const master = "{master}";
const blind = {{method: "POST", mode: "no-cors", credentials: "include"}};
const tries = [
  fetch("/collect", {{credentials: "include"}}),
  fetch(master + "/api/jobs/default/pause", blind),
  fetch(master + "/ui/jobs/default/pause", blind),
  fetch(master + "/api/jobs/default/pause", {{method: "POST", credentials: "include",
        headers: {{"X-Nadird-Console-Key": "k".repeat(43)}}}}),
  fetch(master + "/ui/jobs", {{credentials: "include"}}).then((r) => r.text()),
];
document.getElementById("pause").submit();
Promise.allSettled(tries).then((outcomes) => {{
  document.body.dataset.outcomes = outcomes.map((o) => o.status).join(",");
}});
</script></body></html>"""


@asynccontextmanager
async def hostile_server(master_url: str) -> AsyncIterator[tuple[str, list[str]]]:
    """The other port: serves HOSTILE_PAGE, keeps every Cookie header it is sent."""
    cookies: list[str] = []

    async def page(request: web.Request) -> web.Response:
        cookies.append(request.headers.get("Cookie", ""))
        return web.Response(text=HOSTILE_PAGE.format(master=master_url), content_type="text/html")

    async def collect(request: web.Request) -> web.Response:
        cookies.append(request.headers.get("Cookie", ""))
        return web.Response(text="thanks")

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/collect", collect)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}", cookies
    finally:
        await runner.cleanup()


@asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            yield await browser.new_context(viewport={"width": 1280, "height": 900})
        finally:
            await browser.close()


async def sign_in(page: Any, url: str) -> None:
    await page.goto(url + "/ui")
    await page.fill("#token", TOKEN)
    await page.click("button[type=submit]")
    await page.wait_for_selector("#numbers")


def session_cookie(headers: list[str]) -> str:
    for header in headers:
        for pair in header.split(";"):
            name, _, value = pair.strip().partition("=")
            if name == SESSION_COOKIE:
                return value
    raise AssertionError(f"no {SESSION_COOKIE} in {headers}")


async def test_a_page_on_another_loopback_port_cannot_control_the_console(
    tmp_path: Path,
) -> None:
    async with running_master(config(tmp_path)) as master, chromium() as browser:
        assert master.api is not None
        url = master.api.url
        console = await browser.new_page()
        await sign_in(console, url)
        async with hostile_server(url) as (hostile, cookies):
            other = await browser.new_page()
            await other.goto(hostile + "/")
            await other.wait_for_selector("body[data-outcomes]")
            await other.wait_for_timeout(300)  # the framed form's answer
        # Browsers do send the cookie to the other port: it must not be enough.
        stolen = session_cookie(cookies)
        assert not master.jobs()["default"].paused
        # Even with the real session's CSRF token (read here from the console's tab).
        csrf = await console.get_attribute("form.logout input[name=csrf]", "value")
        await with_the_stolen_cookie(url, stolen, csrf)
        assert not master.jobs()["default"].paused
        # The console's own tab still controls the master.
        await console.click("nav a[href='/ui/jobs']")
        await console.click("tr[data-job=default] button:has-text('Pause')")
        assert "Job default paused." in await console.inner_text(".notice")
        assert master.jobs()["default"].paused


async def with_the_stolen_cookie(url: str, stolen: str, csrf: str) -> None:
    """What `curl` with the cookie value gets: no page, no CSRF token, no
    API read, no control, even with a CSRF token of the real session."""
    async with http(key=None) as thief:
        thief.cookie_jar.update_cookies({SESSION_COOKIE: stolen})
        async with thief.get(url + "/ui/jobs") as page:
            html = await page.text()
            assert page.status == 401 and 'name="csrf"' not in html and "default" not in html
        async with thief.get(url + "/api/stats") as stats:
            assert stats.status == 401
        for path in ("/ui/jobs/default/pause", "/api/jobs/default/pause"):
            async with thief.post(url + path, data={"csrf": csrf}) as refused:
                assert refused.status == 401, path
    async with http(key="k" * 43) as guesser:  # a made-up key with the cookie
        guesser.cookie_jar.update_cookies({SESSION_COOKIE: stolen})
        async with guesser.get(url + "/ui/jobs") as page:
            assert page.status == 401 and 'name="csrf"' not in await page.text()


def version(title: str, price: int, at: float) -> PageRecord:
    url = "http://shop.test/kettle"
    return PageRecord(
        url=url,
        fp=fingerprint(url),
        final_url=url,
        depth=0,
        job="default",
        fetched_at=at,
        status=200,
        data={"title": title, "price": price},
        signature=f"s{price}",
    )


# The old title ends in RIGHT-TO-LEFT OVERRIDE: obeyed, it would turn the rest
# of the line around, the arrow and the new title drawn before the old one.
OLD_TITLE = "Kettle OLD\u202e"
NEW_TITLE = "Kettle NEW"
LEFT_OF = """([first, second]) => {
  const where = (text) => {
    const walker = document.createTreeWalker(document.querySelector("main"), NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const at = node.data.indexOf(text);
      if (at >= 0) {
        const range = document.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + text.length);
        return range.getBoundingClientRect().left;
      }
    }
    return null;
  };
  return [where(first), where(second)];
}"""


async def test_bidi_controls_in_crawled_text_are_shown_not_obeyed(tmp_path: Path) -> None:
    async with running_master(config(tmp_path)) as master, chromium() as browser:
        assert master.api is not None
        store = master.writer.store
        await store.write([version(OLD_TITLE, 299, 100.0)])
        await store.write([version(NEW_TITLE, 259, 200.0)])
        url = "http://rtl.test/\u2067page"
        master.admit_seeds([("http://rtl.test/x", "default")])
        dead_letter(master, "http://rtl.test/x", "http: status 500 \u202eevil\u202c " + url)
        page = await browser.new_page()
        await sign_in(page, master.api.url)
        await page.click("nav a[href='/ui/changes']")
        await page.wait_for_selector("dl.changes")
        text = await page.inner_text("main")
        assert "Kettle OLD\\u202e" in text
        old, new = await page.evaluate(LEFT_OF, ["OLD", "NEW"])
        assert old is not None and new is not None and old < new, (old, new)
        await page.click("nav a[href='/ui/dead-letters']")
        await page.wait_for_selector("td.url")
        text = await page.inner_text("main")
        assert "\\u202eevil\\u202c" in text and "\\u2067page" in text
        for name in ("changes", "dead-letters", "errors", "domains", "workers", "alerts"):
            await page.goto(f"{master.api.url}/ui/{name}")
            await page.wait_for_selector("h1")
            await page.wait_for_function("document.getElementById('shell') === null")
            body = await page.inner_text("body")
            assert not any(0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069 for c in body)


def dead_letter(master: Master, url: str, error: str) -> None:
    """Dead-letter a queued URL as the core does when its tries run out."""
    frontier = master.core.frontier
    ds = frontier.pop_ready(time.monotonic() + 3600)
    assert ds is not None
    [row] = frontier.take(ds, 1)
    assert row.url == url
    frontier.dead(row, error, 4)
    frontier.db.commit()
