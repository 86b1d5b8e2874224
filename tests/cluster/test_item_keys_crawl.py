"""`nadird crawl` of a shop whose products are linked under three URLs each:
with item_key every product is one keyed item, in SQLite and in MongoDB, and
crawling again moves `updated_at`, never `first_seen`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support.mongo_helpers import sync_db
from support.shop import Shop
from test_crawl_command import crawl, records, summary

from nadird.testing import forkserver
from nadird.testing.graph import SiteGraph
from nadird.testing.mongo import with_options
from nadird.testing.web import SyntheticWeb, run_in_thread

pytestmark = pytest.mark.slow

FIELDS = {"sku": [{"css": ".sku"}], "title": [{"css": "h1.title"}]}


def _config(tmp_path: Path, item_key: Any) -> str:
    path = tmp_path / "shop.yaml"
    job = {"fields": FIELDS, "schema": {"sku": {"process": ["strip"]}}, "item_key": item_key}
    path.write_text(json.dumps({"jobs": {"default": job}}))  # JSON is YAML
    return str(path)


def _export_items(store: str, cwd: Path) -> list[dict[str, Any]]:
    done = forkserver.run(
        [sys.executable, "-m", "nadird", "export", "--items", "--store", store], cwd=cwd, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def _alias_urls(shop: Shop, web: SyntheticWeb, index: int) -> set[str]:
    item = shop.products()[index]
    return {f"http://shop.test:{web.port}{path}" for path in item.aliases()}


def test_a_product_under_three_urls_is_one_keyed_item_in_sqlite(tmp_path: Path) -> None:
    shop = Shop(count=14, aliases=True)
    config = _config(tmp_path, ["sku"])
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        web.add_route("/shop/", shop.route)
        seed = f"http://shop.test:{web.port}/shop/"
        first_run = summary(crawl(tmp_path, web, "-c", config, seeds=[seed])[0])
        store = f"sqlite:///{tmp_path / 'crawl.db'}"
        first = {item["key"]: item for item in _export_items(store, tmp_path)}
        again = summary(crawl(tmp_path, web, "-c", config, seeds=[seed])[0])
        second = {item["key"]: item for item in _export_items(store, tmp_path)}
        fetched = [e.path for e in web.entries() if e.path.startswith("/shop/item/3")]
    keyed = [p for p in shop.products() if p.sku is not None]
    assert 0 < len(keyed) < shop.count
    assert sorted(first) == sorted(p.sku or "" for p in keyed)
    for product in keyed:
        item = first[product.sku or ""]
        assert set(item["urls"]) == _alias_urls(shop, web, product.index)
        assert item["job"] == "default" and item["data"]["sku"] == product.sku
        assert item["first_seen"] <= item["updated_at"]
        # The second crawl fetched it again: the same item, seen later.
        assert second[product.sku or ""]["first_seen"] == item["first_seen"]
        assert second[product.sku or ""]["updated_at"] > item["updated_at"]
        assert set(second[product.sku or ""]["urls"]) == set(item["urls"])
    assert sorted(fetched) == ["/shop/item/3"] * 2 + ["/shop/item/3?src=list"] * 2
    # The product without a SKU: its pages say why, and each was counted.
    missing = [p for p in shop.products() if p.sku is None]
    pages = [r for r in records(tmp_path / "crawl.db") if f"/{missing[0].index}" in r.url]
    assert len(pages) == 3 and all(r.item_key is None for r in pages)
    assert all(r.data["_errors"] == {"item_key": "sku has no value"} for r in pages)
    assert first_run["invalid_items"] == again["invalid_items"] == {"default": {"item_key": 3}}


def test_a_url_keyed_shop_is_one_item_per_product_in_mongodb(
    mongo_uri: str, tmp_path: Path
) -> None:
    shop = Shop(count=10, seed=3, aliases=True)
    config = _config(tmp_path, {"url_regex": r"/(?:item|p)/(\d+)"})
    uri = with_options(mongo_uri, serverSelectionTimeoutMS=500, connectTimeoutMS=500)
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        web.add_route("/shop/", shop.route)
        seed = f"http://shop.test:{web.port}/shop/"
        summary(crawl(tmp_path, web, "-c", config, "--store", uri, seeds=[seed])[0])
        with sync_db(mongo_uri) as db:
            first = {doc["key"]: doc for doc in db.keyed_items.find()}
        summary(crawl(tmp_path, web, "-c", config, "--store", uri, seeds=[seed])[0])
        with sync_db(mongo_uri) as db:
            second = {doc["key"]: doc for doc in db.keyed_items.find()}
            pages = db.pages.count_documents({})
    assert sorted(first, key=int) == [str(i) for i in range(shop.count)]
    assert pages == 3 * shop.count + 1  # pages stay one per URL (and the listing)
    for key, doc in first.items():
        assert set(doc["urls"]) == _alias_urls(shop, web, int(key))
        assert second[key]["first_seen"] == doc["first_seen"]
        assert second[key]["updated_at"] > doc["updated_at"]
    exported = _export_items(uri, tmp_path)
    assert sorted(item["key"] for item in exported) == sorted(first)
