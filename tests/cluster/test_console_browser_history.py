"""The console's time axis in headless Chromium, against a revisiting crawl
of the living web (master and worker processes): the URL page of a product
whose price changed three times lists every price in order and charts one
point per version; the Crawl page charts one point per sample; the raw page
and the domain page open from it. Screenshots: test-artifacts/console/.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from support.console_browser import api, console_page, shot, sign_in
from support.jspages import browser_missing

from nadird.master.console.catalog import ZH_CN
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.living import LivingWeb, ManualClock
from nadird.testing.livingpages import LivingPage
from nadird.testing.web import run_in_thread

MISSING = browser_missing()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(MISSING is not None, reason=MISSING or "")]
CHANGES = 3  # the product's price changes this many times while crawled
JOB = {
    "fields": {"price": [{"css": ".price"}], "name": [{"css": "h1"}]},
    "revisit": {"every": "1s"},
    "links": {"scope": "same-domain", "deny": ["/cart"]},
}


def versions(cluster: Cluster, url: str) -> int:
    if not cluster.store_path.exists():
        return 0
    with sqlite3.connect(cluster.store_path) as db:
        try:
            row = db.execute("SELECT count(*) FROM changes WHERE url = ?", (url,)).fetchone()
            return int(row[0])
        except sqlite3.OperationalError:  # the store is not made yet
            return 0


def price_text(product: LivingPage, version: int) -> str:
    cents = product.price(version) or 0
    return f"{cents // 100}.{cents % 100:02d}"


def test_a_products_prices_over_time_and_the_crawls_rates(cluster: Cluster) -> None:
    clock = ManualClock()
    with run_in_thread() as web:
        living = LivingWeb(pages=6, seed=0, clock=clock, pages_per_host=6, noise_share=0.0)
        living.install(web)
        product = next(p for p in living.pages if p.kind == "product")
        product_url = living.url(product)
        config = cluster.master_config(
            jobs={"shop": JOB},
            seeds=[{"url": u, "job": "shop"} for u in living.seeds()],
            master={"exit_when_done": False},
            console={"history_every": 0.5},
        )
        cluster.start("master", "master", config)
        cluster.start("worker", "w1", cluster.worker_config(1))
        state = cluster.workdir / "state"
        assert wait_until(lambda: (state / "api.json").exists(), 20)
        url = json.loads((state / "api.json").read_text())["url"]
        token = (state / "api.token").read_text().strip()
        assert wait_until(lambda: versions(cluster, product_url) == 1, 30)
        for version in range(1, CHANGES + 1):  # the site changes the price; a revisit sees it
            clock.set(product.schedule.became_live(version))
            assert wait_until(lambda v=version: versions(cluster, product_url) == v + 1, 30)
        prices = [price_text(product, v) for v in range(CHANGES, -1, -1)]  # newest first
        assert len(set(prices)) == CHANGES + 1
        in_browser(url, token, product_url, prices)


def in_browser(url: str, token: str, product_url: str, prices: list[str]) -> None:
    with console_page() as page:
        sign_in(page, url, token)
        crawl_charts(page, url, token)
        url_page(page, url, product_url, prices)


def crawl_charts(page: Any, url: str, token: str) -> None:
    """Every chart of the Crawl page holds one point per sample of the master's
    ring, when drawn and again when the refresh gives it the new samples."""
    page.wait_for_selector("body[data-charted]", timeout=15_000)
    first = int(page.get_attribute("#charts", "data-samples"))
    assert page.get_attribute("#chart-pages_per_s", "data-points") == str(first)
    drawn = page.get_attribute("body", "data-charted")
    page.wait_for_function(
        "(drawn) => document.body.dataset.charted !== drawn", arg=drawn, timeout=15_000
    )
    samples = int(page.get_attribute("#charts", "data-samples"))
    assert samples > first  # a sample every 0.5 s, a refresh every 3 s
    points = page.get_attribute("#chart-pages_per_s", "data-points")
    assert samples >= 2 and points == str(samples)
    assert page.get_attribute("#chart-queued", "data-points") == str(samples)
    assert page.get_attribute("#chart-revisits", "data-lines") == "2"
    assert api(url, token, "/api/stats/history")["samples"] >= samples  # more may have come
    assert page.query_selector("#chart-pages_per_s canvas") is not None  # uPlot drew it
    shot(page, "crawl-charts")
    # A narrower window: the charts follow their boxes.
    canvas = "#chart-pages_per_s canvas"
    wide = page.eval_on_selector(canvas, "c => c.clientWidth")
    page.set_viewport_size({"width": 640, "height": 900})
    page.wait_for_function(
        "(w) => document.querySelector('#chart-pages_per_s canvas').clientWidth < w", arg=wide
    )
    shot(page, "crawl-charts-narrow")
    page.set_viewport_size({"width": 1280, "height": 900})


def url_page(page: Any, url: str, product_url: str, prices: list[str]) -> None:
    # From the Changes page, the product's link opens its page.
    page.click("nav a[href='/ui/changes']")
    page.wait_for_selector("h1:has-text('Recent changes')")
    page.click(f"a[href='/ui/url?u={quote(product_url, safe='/')}']")
    page.wait_for_selector("#subject")
    assert page.inner_text("#subject") == product_url
    shown = page.eval_on_selector_all(
        "td.value[data-field=price] .shown", "cells => cells.map(c => c.textContent)"
    )
    assert shown == prices  # every price, newest first
    chart = "div.chart[data-field=price]"
    assert page.get_attribute(chart, "data-points") == str(len(prices))  # one per version
    assert page.query_selector(f"{chart} canvas") is not None
    assert "every 1 s" in page.inner_text("#schedule")
    shot(page, "url")
    page.click("#raw-link")
    page.wait_for_selector("#raw")
    assert f"{prices[0]}</span> EUR" in page.inner_text("#raw")  # markup shown as text
    shot(page, "url-raw")
    page.go_back()
    page.goto(url + f"/ui/url?u={quote(product_url, safe='')}&lang=zh-CN")
    page.wait_for_selector(f"h1:has-text('{ZH_CN['url.heading']}')")
    shot(page, "zh-url")
    page.click("a.lang")  # back to English
    page.wait_for_selector("h1:has-text('Page')")
    host = urlsplit(product_url).hostname
    page.click(f"a[href='/ui/domain?d={host}']")
    page.wait_for_selector(f"h1:has-text('{host}')")
    assert product_url in page.inner_text("table.fetches")
    since_start = page.eval_on_selector_all(
        "#rates td:nth-of-type(1)",
        "cells => cells.map(c => Number(c.textContent.replace(/[,%\\s]/g, '')))",
    )
    new_pages, checks, changes = since_start[:3]
    assert new_pages == 7 and checks > 0 and CHANGES <= changes <= checks  # 7 pages, revisited
    shot(page, "domain")
