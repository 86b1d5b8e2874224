"""The console's URL, raw and domain pages over a real master and its
SQLite store: versions paged newest first, the words a text changed,
numeric fields as chart columns, and hostile values escaped everywhere."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from html import unescape
from pathlib import Path
from urllib.parse import quote

import aiohttp
import pytest
from support.console_helpers import config, http, login, running_master

from nadird.common.urls import fingerprint
from nadird.master.console.diffs import number_of, word_diff
from nadird.master.service.server import Master
from nadird.store.base import PageRecord

HOSTILE = "<script>alert(1)</script>\u202eevil"
URL = "http://shop.test/kettle?x=<b>&y=\u202e"


def version(url: str, price: str, at: float, title: str, body: bytes = b"") -> PageRecord:
    return PageRecord(
        url=url,
        fp=fingerprint(url),
        final_url=url,
        depth=0,
        job="default",
        fetched_at=at,
        status=200,
        content_type="text/html; charset=utf-8",
        body=body,
        data={"price": price, "title": title},
        signature=f"{price}{title}",
    )


@pytest.fixture
async def master(tmp_path: Path) -> AsyncIterator[Master]:
    async with running_master(config(tmp_path)) as running:
        yield running


async def page(client: aiohttp.ClientSession, master: Master, path: str) -> tuple[int, str]:
    assert master.api is not None
    async with client.get(master.api.url + path) as response:
        return response.status, await response.text()


def url_page(url: str, number: int = 1) -> str:
    return f"/ui/url?u={quote(url, safe='')}&page={number}"


async def test_the_versions_are_paged_newest_first_with_the_words_changed(master: Master) -> None:
    store = master.writer.store
    for n in range(25):  # 25 versions: prices 100..124, the title's last word changes
        await store.write([version(URL, f"{100 + n}.00", 1000.0 + n, f"Kettle model {n}")])
    async with http() as client:
        await login(client, master.api.url)  # type: ignore[union-attr]
        status, html = await page(client, master, url_page(URL))
        assert status == 200
        # The newest 20 versions, newest first; each compared with the one before.
        prices = re.findall(r'data-field="price"><span class="shown">(\d+)\.00</span>', html)
        assert prices == [str(124 - n) for n in range(20)]
        assert ">was 123.00<" in html  # a number: old and new
        assert "Kettle model <del" in html and ">23</del><ins" in html and ">24</ins>" in html
        assert "(1 in all)" not in html and "page 1 of 2 (25 in all)" in html
        # One chart column per numeric field, one point per version, oldest first.
        found = re.search(r"data-inline='([^']+)'", html)
        assert found is not None
        chart = json.loads(unescape(found.group(1)))
        assert chart["columns"]["price"] == [100.0 + n for n in range(25)]
        assert len(chart["time"]) == 25 and "title" not in chart["columns"]
        status, last = await page(client, master, url_page(URL, 2))
        assert "first version" in last and "page 2 of 2" in last
        assert re.findall(r'data-field="price"><span class="shown">(\d+)', last) == [
            "104", "103", "102", "101", "100",
        ]  # fmt: skip


async def test_hostile_values_are_escaped_and_bidi_isolated_on_every_new_page(
    master: Master,
) -> None:
    store = master.writer.store
    body = f"<html><body>{HOSTILE}</body></html>".encode()
    await store.write([version(URL, "1", 100.0, HOSTILE, body)])
    await store.write([version(URL, "2", 200.0, HOSTILE + " more", body)])
    master.admit_seeds([("http://shop.test/", "default")])
    async with http() as client:
        await login(client, master.api.url)  # type: ignore[union-attr]
        for path in (url_page(URL), f"/ui/url/raw?u={quote(URL, safe='')}"):
            status, html = await page(client, master, path)
            assert status == 200, path
            assert "<script>alert" not in html and "\u202e" not in html, path
            assert "&lt;script&gt;alert(1)&lt;/script&gt;\\u202eevil" in html, path
        # The raw page: the body as text in a <pre>, not as markup.
        assert '<pre class="raw" id="raw">&lt;html&gt;&lt;body&gt;' in html
        status, html = await page(client, master, "/ui/domain?d=shop.test")
        assert status == 200 and "shop.test" in html
        status, html = await page(client, master, "/ui/domain?d=%3Cx%3E.test")
        assert status == 404 and "never queued" in html and "<x>" not in html


async def test_a_missing_url_or_an_unknown_one_gets_a_clear_answer(master: Master) -> None:
    async with http() as client:
        await login(client, master.api.url)  # type: ignore[union-attr]
        status, html = await page(client, master, "/ui/url")
        assert status == 400 and "?u=" in html
        # A URL as typed finds the page the master keeps canonical.
        await master.writer.store.write([version("http://shop.test/a?a=2&b=1", "5", 1.0, "t")])
        status, html = await page(client, master, url_page("HTTP://Shop.TEST:80/a?b=1&a=2"))
        assert status == 200 and "Not in the store" not in html and ">5</span>" in html
        status, html = await page(client, master, url_page("http://nowhere.test/"))
        assert status == 200 and "Not in the store" in html and "Not revisited" in html
        status, html = await page(client, master, "/ui/url/raw?u=http%3A%2F%2Fnowhere.test%2F")
        assert status == 404 and "not in the store" in html
    async with http(key=None) as stranger:
        status, html = await page(stranger, master, url_page(URL))
        assert status == 401 and "data-field" not in html and "Kettle" not in html


def test_word_diff_and_numbers() -> None:
    assert word_diff("a quick fox", "a slow fox") == [
        ("same", "a "), ("del", "quick"), ("ins", "slow"), ("same", " fox"),
    ]  # fmt: skip
    assert word_diff("x " * 4000, "y") is None  # too long to diff word by word
    assert [number_of(v) for v in ("1,299.00", "12.5 EUR", "€ 9", "12 34", True, 3)] == [
        1299.0, 12.5, 9.0, None, None, 3.0,
    ]  # fmt: skip


async def test_a_keyed_items_page_charts_its_numbers_across_its_urls(master: Master) -> None:
    store = master.writer.store
    urls = ["http://shop.test/kettle-a", "http://mirror.test/kettle?ref=<x>"]
    for n, (url, price) in enumerate([(urls[0], "10.00"), (urls[1], "11.00"), (urls[0], "12.00")]):
        record = version(url, price, 100.0 + n, "Kettle")
        record.item_key = "sku-<1>"
        await store.write([record])
    async with http() as client:
        await login(client, master.api.url)  # type: ignore[union-attr]
        status, html = await page(client, master, url_page(urls[0]))
        assert status == 200
        assert 'href="/ui/item?job=default&amp;key=sku-%3C1%3E"' in html
        status, html = await page(client, master, "/ui/item?job=default&key=sku-%3C1%3E")
        assert status == 200 and "Item sku-&lt;1&gt;" in html
        found = re.search(r"data-inline='([^']+)'", html)
        assert found is not None
        chart = json.loads(unescape(found.group(1)))
        assert chart["columns"]["price"] == [10.0, 11.0, 12.0]  # both URLs, in time order
        assert html.count('<li><a href="/ui/url?u=') == 2
        status, html = await page(client, master, "/ui/item?job=default&key=other")
        assert status == 404 and "No such item" in html
        status, html = await page(client, master, "/ui/item?job=default")
        assert status == 400


async def test_the_raw_page_reads_a_charset_declared_in_a_meta(master: Master) -> None:
    url = "http://gbk.test/page"
    record = version(url, "1", 1.0, "t", '<meta charset="gbk"><p>价格 &lt;</p>'.encode("gbk"))
    record.content_type = "text/html"  # no charset in the header: the <meta> says it
    await master.writer.store.write([record])
    async with http() as client:
        await login(client, master.api.url)  # type: ignore[union-attr]
        status, html = await page(client, master, f"/ui/url/raw?u={quote(url, safe='')}")
    assert status == 200 and "&lt;p&gt;价格 &amp;lt;&lt;/p&gt;" in html
