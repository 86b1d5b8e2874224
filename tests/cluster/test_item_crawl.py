"""A crawl of the synthetic shop: stored items hold numbers, the broken ones
are flagged with their reasons, and the master's counts match the shop's truth."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from support.shop import SHOP_FIELDS, SHOP_SCHEMA, Shop
from test_api import api, request
from test_crawl_command import crawl, records, summary

from nadird.testing.checks import master_cli as cli
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow


def shop_truth(shop: Shop) -> dict[str, int]:
    """How many products fail on each field, as the shop knows."""
    truth: Counter[str] = Counter()
    for item in shop.products():
        truth.update(item.invalid)
    return dict(sorted(truth.items()))


def test_crawled_items_are_typed_and_the_invalid_ones_counted(tmp_path: Path) -> None:
    shop = Shop(count=40)
    config = tmp_path / "shop.yaml"
    # JSON is YAML: the job as the shop module declares it.
    config.write_text(
        json.dumps({"jobs": {"default": {"fields": SHOP_FIELDS, "schema": SHOP_SCHEMA}}})
    )
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        web.add_route("/shop/", shop.route)
        seed = f"http://shop.test:{web.port}/shop/"
        proc, store = crawl(tmp_path, web, "-c", str(config), seeds=[seed])
    result = summary(proc)
    stored = {r.url.rsplit("/", 1)[-1]: r.data for r in records(store) if "/item/" in r.url}
    assert len(stored) == shop.count
    for item in shop.products():
        data = stored[str(item.index)]
        assert data["listed"] == item.listed
        assert (
            data["link"] == f"http://shop.test:{web.port}/shop/item/{(item.index + 1) % shop.count}"
        )
        if not item.invalid:
            assert "_valid" not in data and "_errors" not in data
            assert data["price"] == item.price and type(data["price"]) is type(item.price)
            assert data["title"] == item.title
            continue
        assert data["_valid"] is False
        assert sorted(data["_errors"]) == list(item.invalid)
        if "price" in item.invalid:
            assert data["_errors"]["price"].startswith("number: ")
            assert data["price"] == " ".join(item.price_text.split())
        if "title" in item.invalid:
            assert data["_errors"]["title"] == "required: no value"
        else:
            assert data["title"] == item.title
    truth = shop_truth(shop)
    assert truth["price"] and truth["title"]
    assert result["invalid_items"] == {"default": truth}


def test_stats_and_metrics_count_invalid_items_per_job_and_field(cluster: Cluster) -> None:
    shop = Shop(count=30, seed=2)
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        web.add_route("/shop/", shop.route)
        config = cluster.master_config(
            jobs={"shop": {"fields": SHOP_FIELDS, "schema": SHOP_SCHEMA}},
            seeds=[{"url": f"http://shop.test:{web.port}/shop/", "job": "shop"}],
            master={"exit_when_done": False},
        )
        cluster.start("master", "master", config)
        cluster.start("worker", "w1", cluster.worker_config(1))
        url, token = api(cluster)
        assert wait_until(lambda: cli(cluster, "status")["complete"], 60)
        _, stats = request(url, "/api/stats", token)
        _, text = request(url, "/metrics", token)
    truth = shop_truth(shop)
    assert json.loads(stats)["invalid_items"] == {"shop": truth}
    family = next(
        f for f in text_string_to_metric_families(text.decode()) if f.name == "nadird_invalid_items"
    )
    counted = {s.labels["field"]: s.value for s in family.samples if s.labels["job"] == "shop"}
    assert counted == truth
