"""The console's URL and item pages over a MongoDB store (a real server on
loopback): the same versions, body and keyed item as with SQLite."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from urllib.parse import quote

import pytest
from support.console_helpers import config, http, login, running_master

from nadird.common.urls import fingerprint
from nadird.config import StoreConfig
from nadird.store.base import PageRecord

pytestmark = pytest.mark.slow
URL = "http://shop.test/kettle"


def version(price: str, at: float) -> PageRecord:
    return PageRecord(
        url=URL, fp=fingerprint(URL), final_url=URL, depth=0, job="default", fetched_at=at,
        status=200, content_type="text/html", body=f"<p>{price} &lt;EUR&gt;</p>".encode(),
        data={"price": price}, signature=price, item_key="sku-1",
    )  # fmt: skip


async def test_the_url_and_item_pages_read_a_mongodb_store(tmp_path: Path, mongo_uri: str) -> None:
    cfg = config(tmp_path)
    cfg = dataclasses.replace(cfg, store=StoreConfig(uri=mongo_uri))
    async with running_master(cfg) as master:
        assert master.api is not None
        for n in range(23):
            await master.writer.store.write([version(f"{100 + n}.00", 1000.0 + n)])
        async with http() as client:
            await login(client, master.api.url)
            u = quote(URL, safe="")
            async with client.get(f"{master.api.url}/ui/url?u={u}&page=2") as response:
                html = await response.text()
            assert response.status == 200 and "page 2 of 2 (23 in all)" in html
            shown = re.findall(r'data-field="price"><span class="shown">(\d+)\.00', html)
            assert shown == ["102", "101", "100"] and "first version" in html
            async with client.get(f"{master.api.url}/ui/url/raw?u={u}") as response:
                raw = await response.text()
            assert "&lt;p&gt;122.00 &amp;lt;EUR&amp;gt;&lt;/p&gt;" in raw
            async with client.get(f"{master.api.url}/ui/item?job=default&key=sku-1") as response:
                item = await response.text()
            assert response.status == 200 and "122.00" in item and "data-inline=" in item
