"""What the console shows of feeds and articles, over a real master: the
Crawl page's articles by source, entries left out and discovery latency per
job and domain, the domain page's latency, and each job's near-duplicates,
generic-step fields and given-up pages; in both languages, values escaped."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import aiohttp
import pytest
from support.console_helpers import config, http, login, running_master
from support.core_helpers import page as result

from nadird.common.typecheck import build
from nadird.common.urls import fingerprint
from nadird.job.spec import Job
from nadird.master.console.news_view import quantile
from nadird.master.service.server import Master
from nadird.protocol.messages import PageResult
from nadird.store.base import PageRecord

SITE = "http://news.test"
FEEDS = build(Job, {"feeds": True})  # the job "default", with feeds
HOSTILE = "<i>x</i>\u202e"


def feed(entries: list[tuple[str, float]], no_url: int = 0) -> PageResult:
    urls = [SITE + path for path, _ in entries]
    data = {
        "_feed": {"kind": "rss", "entries": len(entries), "no_url": no_url},
        "entries": [
            {"url": url, "published": datetime.fromtimestamp(t, UTC).isoformat()}
            for url, (_, t) in zip(urls, entries, strict=True)
        ],
    }
    return result(f"{SITE}/feed.xml", data=data, links=urls, link_fps=list(map(fingerprint, urls)))


@pytest.fixture
async def master(tmp_path: Path) -> AsyncIterator[Master]:
    async with running_master(config(tmp_path)) as running:
        yield running


async def get(client: aiohttp.ClientSession, master: Master, path: str) -> tuple[int, str]:
    assert master.api is not None
    async with client.get(master.api.url + path) as response:
        return response.status, await response.text()


def cells(html: str, table: str) -> str:
    found = re.search(rf'<table[^>]* id="{table}">(.*?)</table>', html, re.S)
    assert found is not None, table
    return found.group(1)


async def test_the_crawl_and_domain_pages_show_discovery_by_source_and_latency(
    master: Master,
) -> None:
    seen, now = master.core.discovery, 1_800_000_000.0
    for listed, at in (
        (feed([("/a/0", now - 3600)], no_url=2), now),  # first read: not timed
        (feed([("/a/1", now + 10), ("/a/2", now + 20)]), now + 20),
    ):  # as the master reads a feed: its result, then the new articles it named
        seen.on_page(listed, FEEDS, at)
        seen.named(listed, FEEDS, listed.link_fps, True, at)
    seen.on_page(result(f"{SITE}/a/1"), FEEDS, now + 14)  # 4 s after its stated time
    seen.on_page(result(f"{SITE}/a/2"), FEEDS, now + 60)  # 40 s
    seen.on_page(result(f"{SITE}/a/0"), FEEDS, now + 61)
    seen.on_page(result(f"{SITE}/other"), FEEDS, now + 62)  # named by no feed: a link
    master.admit_seeds([(f"{SITE}/", "default")])  # the domain page needs a queued domain
    async with http() as client:
        await login(client, master.api.url)  # type: ignore[union-attr]
        status, html = await get(client, master, "/ui")
        assert status == 200
        by_source = cells(html, "articles-by-source")
        assert re.findall(r'data-source="(\w+)">(\d+)<', by_source) == [
            ("feed", "3"), ("sitemap", "0"), ("hub", "0"), ("link", "1"),
        ]  # fmt: skip
        assert "no link</bdi>: 2" in by_source
        assert "Discovery latency of job default" in html
        # The job's own: from its histogram (4 s in 2-5 s, 40 s in 30-60 s).
        assert "All 2 articles timed since start: p50 about 5.0 s, p95 about 57.0 s" in html
        assert '<a href="/ui/domain?d=news.test">news.test</a>' in html
        assert 'data-p50="22.0">22.0 s<' in html and 'data-p95="38.2">38.2 s<' in html
        status, html = await get(client, master, "/ui/domain?d=news.test")
        assert status == 200 and 'data-p50="22.0"' in html and "<bdi>default</bdi>" in html
        status, html = await get(client, master, "/ui?lang=zh-CN")
        assert "订阅源：发现" in html and "没有链接</bdi>: 2" in html


async def test_the_crawl_page_counts_near_duplicates_fallbacks_and_given_up_pages(
    master: Master,
) -> None:
    async with http() as client:
        await login(client, master.api.url)  # type: ignore[union-attr]
        status, html = await get(client, master, "/ui")
        assert status == 200 and 'id="article-counts"' not in html  # no article job: no table
        counts = master.counts()
        counts.near_duplicates.update({("news", "marked"): 3, (HOSTILE, "dropped"): 1})
        counts.fallback_extractions.update({("news", "published"): 2})
        counts.article_given_up.update({("news", "over_budget"): 5})
        status, html = await get(client, master, "/ui")
    table = cells(html, "article-counts")
    assert '<td class="num" data-action="marked">3</td>' in table
    assert "<bdi>published</bdi>: 2" in table and "<bdi>over_budget</bdi>: 5" in table
    assert "\u202e" not in html and "<i>x" not in html
    assert "<bdi>&lt;i&gt;x&lt;/i&gt;\\u202e</bdi>" in table


async def test_the_url_page_shows_the_article_fields_and_links_the_first_copy(
    master: Master,
) -> None:
    first, copy = f"{SITE}/a/1", f"{SITE}/copy?x=<b>"
    record = PageRecord(
        url=copy, fp=fingerprint(copy), final_url=copy, depth=0, job="default",
        fetched_at=1000.0, status=200, content_type="text/html",
        data={
            "kind": "article", "title": HOSTILE, "text": "one two three", "language": "en",
            "published": "2026-03-14T09:30:00+01:00", "authors": ["A. Writer"], "tags": [],
            "_fallback": ["published"],
        },
        near_duplicate_of=first,
    )  # fmt: skip
    await master.writer.store.write([record])
    async with http() as client:
        await login(client, master.api.url)  # type: ignore[union-attr]
        status, html = await get(client, master, f"/ui/url?u={quote(copy, safe='')}")
        assert status == 200
        article = cells(html, "article")
        shown = dict(re.findall(r'data-field="(\w+)"><bdi>(.*?)</bdi>', article))
        assert shown == {
            "kind": "article", "title": "&lt;i&gt;x&lt;/i&gt;\\u202e", "text": "3 words",
            "authors": "[&#34;A. Writer&#34;]", "published": "2026-03-14T09:30:00+01:00",
            "language": "en", "_fallback": "[&#34;published&#34;]",
        }  # fmt: skip
        link = '<a href="/ui/url?u=http%3A//news.test/a/1">http://news.test/a/1</a>'
        row = '<tr id="near-duplicate"><th>Near-duplicate of</th><td class="url"><bdi>'
        assert row + link in html
        status, html = await get(client, master, f"/ui/url?u={quote(first, safe='')}")
        assert 'id="article"' not in html and 'id="near-duplicate"' not in html


def test_a_jobs_quantiles_are_estimated_from_its_buckets_as_prometheus_does() -> None:
    inf = float("inf")
    buckets = [(1.0, 0.0), (2.0, 4.0), (5.0, 8.0), (inf, 10.0)]
    assert quantile(buckets, 0.2) == 1.5  # rank 2 of the 4 in 1-2 s: halfway
    assert quantile(buckets, 0.6) == 3.5  # rank 6: halfway through 2-5 s
    assert quantile(buckets, 0.95) == 5.0  # past the last finite bound: that bound
    assert quantile([(1.0, 3.0), (inf, 3.0)], 0.5) == 0.5  # the first bucket starts at 0
    assert quantile([(1.0, 0.0), (inf, 0.0)], 0.5) is None and quantile([], 0.5) is None
