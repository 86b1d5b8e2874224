"""Crawls of requests that are more than a GET: a POST search form with two
pages of results, JSON POSTs, job default headers, dedup of one request
spelled twice, and a queued POST that survives kill -9 of the master. The
synthetic web's access log says what was really sent."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
from support.search import FIELDS, SearchForm
from test_api import api, request
from test_crawl_command import crawl, records, summary

from nadird.job.request import parse
from nadird.testing.access import AccessEntry
from nadird.testing.checks import master_cli as cli
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow
KEY = "k-123"


def posts(entries: list[AccessEntry]) -> list[AccessEntry]:
    return [e for e in entries if e.method == "POST"]


def item_gets(entries: list[AccessEntry]) -> list[str]:
    return [e.path for e in entries if e.method == "GET" and e.path.startswith("/search/item/")]


def test_a_search_form_is_crawled_page_by_page_and_stored_with_meta(tmp_path: Path) -> None:
    config = tmp_path / "search.yaml"
    job = {
        "fields": FIELDS,
        "max_depth": 1,
        "headers": {"X-Api-Key": KEY, "X-Client": "job"},
        "cookies": {"region": "eu"},
    }
    config.write_text(json.dumps({"jobs": {"default": job}}))
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        SearchForm(key=KEY).install(web)
        url = f"http://search.test:{web.port}/search"
        lines = [
            {"url": url, "method": "POST", "form": {"q": "kettle", "page": 1}, "meta": {"p": 1}},
            {"url": url, "method": "POST", "form": {"q": "kettle", "page": 2}, "meta": {"p": 2}},
            # The first one again, its fields in another order: one request.
            {"url": url, "method": "post", "form": {"page": "1", "q": "kettle"}, "meta": {"p": 9}},
            {
                "url": url,
                "method": "POST",
                "json": {"q": "teapot", "page": 1},
                "headers": {"X-Client": "mine"},
                "cookies": {"sid": "7"},
                "meta": {"about": ["tea", 1]},
            },
        ]
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("".join(json.dumps(line) + "\n" for line in lines))
        out = tmp_path / "out.jsonl"
        proc, store = crawl(
            tmp_path, web, "-c", str(config), "--seeds", str(seeds), "--out", str(out), seeds=[]
        )
        entries = web.entries()
    assert summary(proc)["complete"] is True
    sent = sorted((e.path, e.body) for e in posts(entries))
    assert sent == [
        ("/search", "page=1&q=kettle"),
        ("/search", "page=2&q=kettle"),
        ("/search", '{"page":1,"q":"teapot"}'),
    ]
    # The job's headers and cookies on every request, the request's own winning.
    for entry in posts(entries):
        teapot = "teapot" in entry.body
        assert entry.headers["x-api-key"] == KEY
        assert entry.headers["x-client"] == ("mine" if teapot else "job")
        assert entry.headers["cookie"] == ("region=eu; sid=7" if teapot else "region=eu")
    assert {e.status for e in entries} == {200, 404}  # no 400/403/405; 404: robots.txt
    # Links found on a POST page are plain GETs, each fetched once.
    items = item_gets(entries)
    assert sorted(items) == sorted(
        SearchForm.hits("kettle", 1) + SearchForm.hits("kettle", 2) + SearchForm.hits("teapot", 1)
    )
    stored = records(store)
    pages = {(r.data.get("query"), r.data.get("page")): r for r in stored if r.method == "POST"}
    assert sorted(pages) == [("kettle", "1"), ("kettle", "2"), ("teapot", "1")]
    assert pages["kettle", "1"].meta == {"p": 1}  # the duplicate was never admitted
    assert pages["kettle", "2"].meta == {"p": 2}
    assert pages["teapot", "1"].meta == {"about": ["tea", 1]}
    assert pages["kettle", "1"].fp == parse(lines[0]).canonical().fingerprint()
    assert len(pages["kettle", "1"].data["results"]) == 3
    gets = [r for r in stored if "/item/" in r.url]
    assert len(gets) == 9 and all(r.method == "GET" and r.meta == {} for r in gets)
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(e["meta"].get("p", 0) for e in exported if e["method"] == "POST") == [0, 1, 2]


def start_master(cluster: Cluster, port: int, seeds: list[Any]) -> None:
    config = cluster.master_config(
        jobs={"default": {"fields": FIELDS, "max_depth": 0}},
        seeds=seeds,
        master={"exit_when_done": False, "snapshot_interval": 0.5},
    )
    cluster.start("master", "master", config)


def test_requests_from_the_api_are_checked_deduplicated_and_survive_kill_9(
    cluster: Cluster,
) -> None:
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        SearchForm().install(web)
        url = f"http://search.test:{web.port}/search"
        page_1 = {"url": url, "method": "POST", "form": {"q": "kettle", "page": 1}}
        start_master(cluster, web.port, [{**page_1, "meta": {"from": "config"}}])
        base, token = api(cluster)
        for bad, reason in [
            ({"url": url, "method": "PATCH"}, "urls[0].method: expected one of"),
            ({"url": url, "headers": {"X-A": "1\n2"}}, "urls[0].headers.X-A: holds a newline"),
            ({"url": url, "headers": {"X-A": 1}}, "urls[0].headers.X-A: expected a string"),
            (
                {"url": url, "method": "POST", "body": "{", "content_type": "application/json"},
                "urls[0].body: not valid JSON",
            ),
        ]:
            body = json.dumps({"urls": [bad, {"url": url + "/item/x/1"}]}).encode()
            status, text = request(base, "/api/seeds", token, "POST", body)
            assert status == 400, text
            assert reason in json.loads(text)["error"]
        again = {"url": url, "method": "POST", "form": {"page": "1", "q": "kettle"}}
        teapot = {
            "url": url,
            "method": "POST",
            "json": {"page": 1, "q": "teapot"},
            "meta": {"t": 1},
        }
        assert cli(cluster, "submit", json.dumps(again))["admitted"] == 0  # seen: one request
        assert cli(cluster, "submit", json.dumps(teapot))["admitted"] == 1
        assert wait_until(lambda: cli(cluster, "status")["queued"] == 2, 20)
        master = cluster.proc("master")
        master.kill(signal.SIGKILL)  # no worker yet: both requests wait in the frontier
        master.popen.wait(10)
        (cluster.workdir / "state" / "api.json").unlink()  # the killed run's address
        cluster.start_again("master", cluster.workdir / "master.yaml")
        api(cluster)
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert wait_until(lambda: cli(cluster, "status").get("complete"), 60)
        entries = web.entries()
    assert sorted(e.body for e in posts(entries)) == ["page=1&q=kettle", '{"page":1,"q":"teapot"}']
    assert not [
        e for e in entries if e.path.startswith("/search/item/")
    ]  # refused bodies sent nothing
    stored = {r.data["query"]: r for r in cluster.records()}
    assert stored["kettle"].meta == {"from": "config"} and stored["teapot"].meta == {"t": 1}
    assert {r.method for r in stored.values()} == {"POST"}


def test_a_walk_whose_page_is_in_the_post_body_goes_on_as_posts(tmp_path: Path) -> None:
    config = tmp_path / "walk.yaml"
    job = {"fields": FIELDS, "paginate": {"param": "page", "until_empty": "results"}}
    config.write_text(json.dumps({"jobs": {"default": job}}))
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        SearchForm().install(web)
        url = f"http://search.test:{web.port}/search"
        lines = [
            {"url": url, "method": "POST", "form": {"q": "kettle"}, "meta": {"q": "kettle"}},
            {
                "url": url,
                "method": "POST",
                "json": {"q": "teapot", "page": 1},
                "meta": {"q": "tea"},
            },
        ]
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("".join(json.dumps(line) + "\n" for line in lines))
        proc, store = crawl(tmp_path, web, "-c", str(config), "--seeds", str(seeds), seeds=[])
        entries = web.entries()
    assert summary(proc)["complete"] is True
    # Page 3 holds no results: the walk ends there, for the form and the JSON body alike.
    assert sorted(e.body for e in posts(entries)) == [
        "page=2&q=kettle",
        "page=3&q=kettle",
        "q=kettle",
        '{"page":1,"q":"teapot"}',
        '{"page":2,"q":"teapot"}',
        '{"page":3,"q":"teapot"}',
    ]
    walked = [r for r in records(store) if r.method == "POST"]
    assert sorted((r.data["query"], r.data["page"], r.depth) for r in walked) == [
        ("kettle", "1", 0),
        ("kettle", "2", 1),
        ("kettle", "3", 2),
        ("teapot", "1", 0),
        ("teapot", "2", 1),
        ("teapot", "3", 2),
    ]
    assert {r.data["query"]: r.meta for r in walked} == {
        "kettle": {"q": "kettle"},
        "teapot": {"q": "tea"},
    }
    assert len(item_gets(entries)) == 12  # two pages of three results, twice
