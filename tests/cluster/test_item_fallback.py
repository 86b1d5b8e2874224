"""Fallback jobs (on_failure): a URL a job dead-letters, or whose item is
invalid, is fetched again by the named job, and its record says so; a
fallback that names no job, itself or a cycle is a config error (exit 2)."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from support.shop import Shop
from test_crawl_command import crawl, records, summary

from nadird.testing import forkserver
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

TITLE = {"title": [{"css": "h1.title"}]}
# The simpler job: the <title> every page has, no schema, no links.
SIMPLE = {"fields": {"title": [{"xpath": "//title/text()"}]}, "links": {"follow": False}}


def _write(tmp_path: Path, config: dict[str, Any]) -> str:
    path = tmp_path / "crawl.yaml"
    path.write_text(json.dumps(config))  # JSON is YAML
    return str(path)


@pytest.mark.slow
def test_a_url_that_dead_letters_is_fetched_by_the_fallback_job(tmp_path: Path) -> None:
    shop = Shop(count=3, fail_first=2)  # two 500s, then the page
    job = {
        "fields": TITLE,
        "max_retries": 1,  # so the two 500s use up this job's tries
        "links": {"follow": False},
        "on_failure": {"job": "simple"},
    }
    config = {
        "master": {"retry_base_delay": 0.05, "retry_max_delay": 0.1},
        "jobs": {"default": job, "simple": SIMPLE},
    }
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        web.add_route("/shop/", shop.route)
        seeds = [f"http://shop.test:{web.port}{p.path}" for p in shop.products()]
        done = summary(crawl(tmp_path, web, "-c", _write(tmp_path, config), seeds=seeds)[0])
        statuses: dict[str, list[int]] = defaultdict(list)
        for entry in web.entries():
            if entry.path.startswith("/shop/"):
                statuses[entry.path].append(entry.status)
    # The access log: each URL failed twice for `default`, then `simple` got it.
    assert dict(statuses) == {p.path: [500, 500, 200] for p in shop.products()}
    stored = records(tmp_path / "crawl.db")
    assert sorted(r.url.rsplit("/", 1)[-1] for r in stored) == ["0", "1", "2"]
    for record in stored:
        assert (record.job, record.fallback_from, record.status) == ("simple", "default", 200)
        assert record.data == {"title": f"item {record.url.rsplit('/', 1)[-1]}"}
    assert done["dead_letters"] == 0 and done["retries"] == 3
    assert done["fallbacks"] == {"default": {"simple": 3}}


@pytest.mark.slow
def test_an_invalid_item_is_handed_to_the_fallback_job(tmp_path: Path) -> None:
    shop = Shop(count=12)  # product 5 has no title
    job = {
        "fields": {**TITLE, "price": [{"css": ".price"}]},
        "schema": {"title": {"required": True}, "price": {"process": ["strip"]}},
        "on_failure": {"job": "simple"},
    }
    config = {"jobs": {"default": job, "simple": SIMPLE}}
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        web.add_route("/shop/", shop.route)
        seed = f"http://shop.test:{web.port}/shop/"
        done = summary(crawl(tmp_path, web, "-c", _write(tmp_path, config), seeds=[seed])[0])
        fetched = [entry.path for entry in web.entries()]
    untitled = [p for p in shop.products() if p.title is None]
    assert [p.index for p in untitled] == [5]
    by_path = {r.url.split(f":{web.port}", 1)[1]: r for r in records(tmp_path / "crawl.db")}
    assert len(by_path) == shop.count + 1  # the products and the listing
    for product in shop.products():
        record = by_path[product.path]
        if product.title is None:
            assert (record.job, record.fallback_from) == ("simple", "default"), record
            assert record.data == {"title": "item 5"}
            assert fetched.count(product.path) == 2  # once by each job
        else:
            assert (record.job, record.fallback_from) == ("default", None)
            assert record.data["title"] == product.title and "_valid" not in record.data
            assert fetched.count(product.path) == 1
    assert done["invalid_items"] == {"default": {"title": 1}}
    assert done["fallbacks"] == {"default": {"simple": 1}}


@pytest.mark.parametrize(
    ("jobs", "message"),
    [
        (
            {"a": {"on_failure": {"job": "nope"}}},
            "jobs.a.on_failure.job: a known job, got 'nope'",
        ),
        (
            {"a": {"on_failure": {"job": "a"}}},
            "jobs.a.on_failure.job: another job (a job cannot fall back to itself)",
        ),
        (
            {
                "a": {"on_failure": {"job": "b"}},
                "b": {"on_failure": {"job": "c"}},
                "c": {"on_failure": {"job": "b"}},
            },
            "jobs.b.on_failure.job: no cycle of fallbacks, got b -> c -> b",
        ),
        ({"a": {"on_failure": {"job": 3}}}, "jobs.a.on_failure.job: expected str"),
        ({"a": {"on_failure": {"jobs": "b"}}}, "jobs.a.on_failure.jobs: unknown key"),
    ],
)
def test_a_wrong_fallback_exits_2_naming_the_key(
    tmp_path: Path, jobs: dict[str, Any], message: str
) -> None:
    path = _write(tmp_path, {"jobs": jobs})
    done = forkserver.run([sys.executable, "-m", "nadird", "check", "-c", path], timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().startswith(f"nadird: error: {path}: {message}"), done.stderr
