"""Crawls that render: real master and worker processes (and `nadird crawl`)
against the synthetic web's JavaScript pages; the access log says what was
fetched, and by whom.

Skipped without Playwright or Chromium (.ci/run installs both).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from support.jspages import FIELDS, JS_HOST, READY, JsSite, browser_missing

from nadird.testing.checks import site_job
from nadird.testing.cluster import Cluster, wait_until, worker_address
from nadird.testing.graph import SiteGraph
from nadird.testing.web import SyntheticWeb, run_in_thread

MISSING = browser_missing()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(MISSING is not None, reason=MISSING or ""),
]


def spa_job(**extra: Any) -> dict[str, Any]:
    return {
        "fields": FIELDS,
        "render_wait_for": READY,
        # The default wait (settle) after the ready mark: a short quiet
        # period, as the pages change nothing once marked.
        "render_quiet": 0.2,
        "render_max_wait": 5,
        "domain_concurrency": 2,
        **extra,
    }


def js_paths(web: SyntheticWeb) -> list[str]:
    return [e.path for e in web.entries() if e.host == JS_HOST and e.path != "/robots.txt"]


def path_of(url: str) -> str:
    return urlsplit(url).path


def crawl(
    tmp_path: Path,
    js: JsSite,
    *extra: str,
    job: dict[str, Any] | None = None,
    seeds: list[str] | None = None,
) -> dict[str, dict[str, Any]]:
    """`nadird crawl` the JS site with one worker; the stored records by URL path."""
    tmp_path.mkdir()
    config = tmp_path / "jobs.yaml"
    the_job = spa_job() if job is None else job
    config.write_text(yaml.safe_dump({"jobs": {"default": the_job}}), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    args = [
        *("-m", "nadird", "crawl", *(seeds or [js.seed()]), "--config", str(config)),
        *("--resolve", "*.test=127.0.0.1", "--allow-private", "--delay", "0"),
        *("--workers", "1", "--store", f"sqlite:///{tmp_path / 'crawl.db'}", "--out", str(out)),
        *extra,
    ]
    proc = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["complete"] is True
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    return {path_of(line["url"]) + _query(line["url"]): line for line in lines}


def _query(url: str) -> str:
    query = urlsplit(url).query
    return f"?{query}" if query else ""


def test_crawl_render_sees_what_scripts_write_and_a_plain_crawl_does_not(tmp_path: Path) -> None:
    js = JsSite(items=4)
    with run_in_thread() as web:
        js.install(web)
        plain = crawl(tmp_path / "plain", js)
        plain_paths = js_paths(web)
        before = len(web.entries())
        rendered = crawl(tmp_path / "rendered", js, "--render")
        rendered_entries = web.entries()[before:]
    # Without a browser: the static link only; the items are never even asked for.
    assert sorted(plain_paths) == sorted(JsSite.static_paths())
    assert set(plain) == JsSite.static_paths()
    assert plain["/js/"]["data"] == {"title": None, "price": None}
    assert not any(line["rendered"] for line in plain.values())
    # Rendered: the links and fields the scripts wrote, from the same rules.
    assert set(rendered) == JsSite.static_paths() | set(js.item_paths())
    assert rendered["/js/"]["data"]["title"] == "JS shop"
    for i, path in enumerate(js.item_paths()):
        assert rendered[path]["data"] == JsSite.item_fields(i), path
        assert rendered[path]["error"] is None
        assert rendered[path]["rendered"] is True
    fetched = [e.path for e in rendered_entries if e.host == JS_HOST and e.path != "/robots.txt"]
    assert set(fetched) == js.rendered_paths()
    assert fetched.count("/js/app.js") == 1  # then from the worker's cache
    # Every page was fetched once: the browser was handed the worker's bytes.
    pages = [p for p in fetched if p in set(rendered)]
    assert len(pages) == len(set(pages))
    # Images are not loaded, third-party scripts not asked for.
    assert not [e for e in web.entries() if e.host != JS_HOST or "/img/" in e.path]


def test_an_invalid_item_is_rendered_and_stored_as_the_browser_left_it(tmp_path: Path) -> None:
    js = JsSite(items=1)
    schema = {"price": {"type": "number", "process": ["strip", "number"]}}
    retry = spa_job(render="auto", schema=schema, render_when_invalid=True)
    plain = spa_job(render="auto", schema=schema)
    with run_in_thread() as web:
        js.install(web)
        seeds = [js.url("/js/priced?price=12.99"), js.url("/js/priced?price=soon")]
        rendered = crawl(tmp_path / "retry", js, job=retry, seeds=seeds)
        asked = [p for p in js_paths(web) if p.startswith("/js/api/price")]
        before = len(web.entries())
        left = crawl(tmp_path / "plain", js, job=plain, seeds=seeds)
        asked_plain = [e.path for e in web.entries()[before:] if e.path.startswith("/js/api/")]
    valid, still = rendered["/js/priced?price=12.99"], rendered["/js/priced?price=soon"]
    assert valid["rendered"] is True and valid["data"]["price"] == 12.99
    assert "_valid" not in valid["data"]
    assert still["rendered"] is True and still["data"]["_valid"] is False
    assert set(still["data"]["_errors"]) == {"price"}
    assert sorted(asked) == ["/js/api/price?price=12.99", "/js/api/price?price=soon"]
    # Without render_when_invalid: stored as the HTML had it, never rendered.
    assert asked_plain == []
    for line in left.values():
        assert line["rendered"] is False and line["data"]["price"] == "--"
        assert line["data"]["_valid"] is False


def js_worker(cluster: Cluster, index: int, **render: Any) -> dict[str, Any]:
    config = cluster.worker_config(index, render=render)
    config["worker"]["capabilities"] = ["html", "javascript"]
    return config


def test_render_bags_go_only_to_javascript_workers(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=2, pages=30)
    js = JsSite(items=6, never=True)
    with run_in_thread(graph) as web:
        js.install(web)
        # A max wait that cuts off the page that never settles, with room for
        # the others to settle on a loaded machine.
        jobs = {**site_job(graph), "spa": spa_job(render=True, render_max_wait=6)}
        seeds = [*graph.seeds(), {"url": js.seed(), "job": "spa"}]
        master = cluster.start("master", "master", cluster.master_config(jobs=jobs, seeds=seeds))
        cluster.start("worker", "w1", cluster.worker_config(1))  # html only
        cluster.start("worker", "w2", js_worker(cluster, 2))
        assert cluster.wait(master, 90) == 0
        entries = web.entries()
    js_clients = {e.client for e in entries if e.host == JS_HOST}
    assert js_clients == {worker_address(2)}
    # w1 was there all along, taking the other job's bags.
    assert worker_address(1) in {e.client for e in entries if e.host != JS_HOST}
    stored = {path_of(r.url): r for r in cluster.records() if JS_HOST in r.url}
    for i, path in enumerate(js.item_paths()):
        record = stored[path]
        assert record.error is None and record.data == JsSite.item_fields(i)
    # The page that never settles was cut off at the job's max wait and recorded.
    never = stored["/js/never"]
    assert never.status == 0 and never.error is not None
    assert never.error.startswith("render_timeout:")


def test_a_browser_killed_mid_crawl_is_restarted_and_the_crawl_completes(
    cluster: Cluster,
) -> None:
    js = JsSite(items=10)
    with run_in_thread(latency=0.02) as web:
        js.install(web)
        jobs = {"spa": spa_job(render=True)}
        seeds = [{"url": js.seed(), "job": "spa"}]
        master = cluster.start("master", "master", cluster.master_config(jobs=jobs, seeds=seeds))
        worker = cluster.start("worker", "w1", js_worker(cluster, 1, max_concurrent=2))

        def started() -> list[dict[str, Any]]:
            return [e for e in worker.logs() if e.get("event") == "browser_started"]

        assert wait_until(lambda: len(started()) == 1, 30)
        pid = started()[0]["pid"]
        assert wait_until(lambda: sum("/api/item/" in p for p in js_paths(web)) >= 3, 30)
        os.kill(pid, signal.SIGKILL)
        assert cluster.wait(master, 90) == 0
    events = [e.get("event") for e in worker.logs()]
    assert "browser_crashed" in events
    assert len({e["pid"] for e in started()}) == 2
    stored = {r.url: r for r in cluster.records()}
    for i, path in enumerate(js.item_paths()):
        record = stored[js.url(path)]
        assert record.error is None and record.data == JsSite.item_fields(i), path
