"""The console in headless Chromium with a Chinese locale, against a master
process: the pages in Chinese, console.js writing its words in Chinese
when it refreshes the numbers, and the language switch kept by its cookie.
Screenshots: test-artifacts/console/zh-*.png.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from support import REPO
from support.jspages import browser_missing

from nadird.master.console.catalog import EN, ZH_CN
from nadird.testing.cluster import Cluster, wait_until

ARTIFACTS = REPO / "test-artifacts" / "console"
MISSING = browser_missing()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(MISSING is not None, reason=MISSING or "")]


def test_a_chinese_browser_sees_chinese_pages_and_script_words(cluster: Cluster) -> None:
    from playwright.sync_api import sync_playwright

    cluster.start("master", "master", cluster.master_config(master={"exit_when_done": False}))
    state = cluster.workdir / "state"
    assert wait_until(lambda: (state / "api.json").exists(), 20)
    url = json.loads((state / "api.json").read_text())["url"]
    token = (state / "api.token").read_text().strip()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            # locale: the browser sends Accept-Language: zh-CN.
            page = browser.new_page(locale="zh-CN")
            run(page, url, token)
        finally:
            browser.close()


def run(page: Any, url: str, token: str) -> None:
    assert page.goto(url + "/ui").status == 401
    assert page.inner_text("h1") == ZH_CN["login.title"]
    page.fill("#token", token)
    page.click("button[type=submit]")
    page.wait_for_selector("#numbers")
    # Written by console.js from /api/stats (nothing queued: done, healthy).
    page.wait_for_selector("body[data-refreshed]", timeout=15_000)
    assert page.inner_text("[data-stat=eta]") == ZH_CN["overview.done"]
    assert page.inner_text("[data-stat=state]") == ZH_CN["overview.healthy"]
    assert page.inner_text("nav a.here") == ZH_CN["nav.crawl"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "zh-crawl.png"), full_page=True)
    page.click("a.lang")  # English, and it stays while the browser still asks for Chinese
    page.wait_for_selector(f"h1:has-text('{EN['overview.heading']}')")
    page.click("nav a[href='/ui/workers']")
    page.wait_for_selector(f"h1:has-text('{EN['nav.workers']}')")
    page.click("a.lang")
    page.wait_for_selector(f"h1:has-text('{ZH_CN['nav.workers']}')")
