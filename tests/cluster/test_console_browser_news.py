"""What this round added to the console, in headless Chromium, against a
crawl of the living news web (master and worker processes) with `feeds:`,
`article:` and `warc:`: the Crawl page's discovery by source and latency
per domain, the domain page's latency, and an article's URL page with its
article fields and the WARC record of each fetch, whose Copy button puts the
`warcio extract` command on the clipboard. Screenshots: test-artifacts/console/.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from support.console_browser import api, console_page, shot, sign_in
from support.jspages import browser_missing

from nadird.master.console.catalog import ZH_CN
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.living import ScaledClock
from nadird.testing.news import NewsSite, NewsWeb
from nadird.testing.web import run_in_thread

MISSING = browser_missing()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(MISSING is not None, reason=MISSING or "")]
WARCIO = str(Path(sys.executable).with_name("warcio"))
JOB = {
    "feeds": {"revisit": {"adaptive": {"min": "0.5s", "max": "5s"}}},
    "article": True,
    "links": {"scope": "same-domain"},
    "max_depth": 3,
}


def timed(url: str, token: str) -> bool:
    """Articles counted from a feed and from a sitemap, and some timed."""
    feeds = api(url, token, "/api/stats").get("feeds", {}).get("news", {})
    found = feeds.get("articles", {})
    return bool(feeds.get("latency")) and found.get("feed", 0) > 0 and found.get("sitemap", 0) > 0


def an_article(cluster: Cluster) -> str:
    with sqlite3.connect(cluster.store_path) as db:
        row = db.execute(
            "SELECT url FROM pages WHERE url LIKE '%/articles/%' ORDER BY fetched_at DESC"
        ).fetchone()
    return str(row[0])


def test_feeds_articles_and_the_archive_on_the_console(cluster: Cluster) -> None:
    sites = [NewsSite("rss.test", "rss", 1.5, 10), NewsSite("map.test", "news-sitemap", 2.0, 10)]
    with run_in_thread() as web:
        news = NewsWeb(sites, ScaledClock(1.0)).install(web)
        config = cluster.master_config(
            jobs={"news": JOB},
            seeds=[{"url": u, "job": "news"} for u in news.seeds()],
            master={"exit_when_done": False},
            warc={"dir": str(cluster.workdir / "warc")},
        )
        cluster.start("master", "master", config)
        cluster.start("worker", "w1", cluster.worker_config(1))
        state = cluster.workdir / "state"
        assert wait_until(lambda: (state / "api.json").exists(), 20)
        url = json.loads((state / "api.json").read_text())["url"]
        token = (state / "api.token").read_text().strip()
        assert wait_until(lambda: timed(url, token), 40)
        in_browser(url, token, an_article(cluster))


def in_browser(url: str, token: str, article: str) -> None:
    with console_page(origin=url, clipboard=True) as page:
        sign_in(page, url, token)
        crawl_page(page, url)
        url_page(page, url, article)


def crawl_page(page: Any, url: str) -> None:
    page.wait_for_selector("#articles-by-source")
    counts = page.eval_on_selector_all(
        "#articles-by-source tr[data-job=news] td[data-source]",
        "cells => Object.fromEntries(cells.map(c => [c.dataset.source, Number(c.textContent)]))",
    )
    assert counts["feed"] > 0 and counts["sitemap"] > 0, counts
    p50 = page.eval_on_selector_all("table.latency td[data-p50]", "cells => cells.length")
    assert p50 >= 1
    shot(page, "crawl-feeds")
    page.goto(url + "/ui?lang=zh-CN")
    page.wait_for_selector(f"h2:has-text('{ZH_CN['news.discovery']}')")
    shot(page, "zh-crawl-feeds")
    page.click("a.lang")  # back to English
    page.wait_for_selector("#articles-by-source")
    page.click("table.latency a[href^='/ui/domain?d=']")
    page.wait_for_selector("h2#discovery")
    assert page.eval_on_selector_all("table.latency td[data-p95]", "cells => cells.length") >= 1
    shot(page, "domain-feeds")


def url_page(page: Any, url: str, article: str) -> None:
    page.goto(url + f"/ui/url?u={quote(article, safe='')}")
    page.wait_for_selector("#subject")
    fields = page.eval_on_selector_all(
        "#article td[data-field]", "cells => cells.map(c => c.dataset.field)"
    )
    assert {"kind", "title", "published"} <= set(fields), fields
    assert page.inner_text("#captures tbody tr:first-child td:nth-child(2)") in (
        "response", "revisit",
    )  # fmt: skip
    page.click("#captures button.copy")
    page.wait_for_selector("#captures button.copy:has-text('Copied')")
    command = page.evaluate("navigator.clipboard.readText()")
    assert command.startswith("warcio extract ")
    shot(page, "url-article-archive")
    words = command.split()
    read = subprocess.run([WARCIO, *words[1:]], capture_output=True, timeout=30)
    assert read.returncode == 0 and read.stdout, read.stderr  # the record is where it says
