"""Crawls of the synthetic web into MongoDB: master and worker PROCESSES (the
Cluster harness) and `nadird crawl --store mongodb://...`, including an outage
of the database server in the middle of the crawl."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from support.mongo_helpers import sync_db

from nadird.testing import forkserver
from nadird.testing.checks import expected_set, page_requests, site_job
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import HTML_TYPE, SiteGraph
from nadird.testing.mongo import MongoServer, with_options
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow

# In the URI, so they apply whether or not the master hands its `store`
# section to open_store: an outage is noticed in half a second.
FAST = {"serverSelectionTimeoutMS": 500, "connectTimeoutMS": 500}


@pytest.fixture
def in_workdir(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> Cluster:
    # The master's relative default spool path lands in the test's directory.
    monkeypatch.chdir(cluster.workdir)
    return cluster


def start_mongo_crawl(cluster: Cluster, graph: SiteGraph, uri: str) -> Any:
    store = {
        "uri": with_options(uri, **FAST),
        "spool_path": str(cluster.workdir / "state" / "mongo-spool.db"),
        "server_selection_timeout": 0.5,
        "connect_timeout": 0.5,
    }
    config = cluster.master_config(jobs=site_job(graph), seeds=graph.seeds(), store=store)
    proc = cluster.start("master", "master", config)
    for i in (1, 2):
        cluster.start("worker", f"w{i}", cluster.worker_config(i))
    return proc


def assert_each_page_and_item_once(uri: str, graph: SiteGraph) -> None:
    expected = expected_set(graph)
    html = {url for url in expected if graph.content_type_of(url) == HTML_TYPE}
    with sync_db(uri) as db:
        pages = list(db.pages.find({}, {"url": 1, "status": 1, "error": 1, "duplicate_of": 1}))
        items = list(db.items.find({}, {"source_url": 1, "data": 1}))
        page_indexes = db.pages.index_information()
        item_indexes = db.items.index_information()
    urls = [page["url"] for page in pages]
    assert len(urls) == len(set(urls)), "a URL was stored twice"
    assert set(urls) == set(expected)
    for page in pages:
        assert page["error"] is None and page["status"] == graph.status_of(page["url"])
        assert "duplicate_of" not in page  # every synthetic page has its own text
    sources = [item["source_url"] for item in items]
    assert len(sources) == len(set(sources)) and set(sources) == html
    assert all(item["data"].get("title") for item in items)
    assert {"url", "fetched_at_desc", "fetched_at_ttl", "job_id"} <= set(page_indexes)
    assert {"job_updated_at", "job_text_fp"} <= set(item_indexes)


def spooled(cluster: Cluster) -> int:
    """Records in the master's spool file, read beside it (WAL allows a reader)."""
    path = cluster.workdir / "nadird-state" / "mongo-spool.db"
    if not path.exists():
        path = cluster.workdir / "state" / "mongo-spool.db"  # once the master passes its config
    if not path.exists():
        return 0
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        try:
            (count,) = conn.execute("SELECT coalesce(sum(records), 0) FROM batches").fetchone()
        except sqlite3.OperationalError:  # created, schema not yet committed
            return 0
    return int(count)


def events(cluster: Cluster, name: str) -> list[str]:
    return [e.get("event", "") for e in cluster.proc(name).logs()]


def test_cluster_crawl_into_mongodb_stores_each_page_and_item_once(
    in_workdir: Cluster, mongo_uri: str
) -> None:
    graph = SiteGraph(hosts=6, pages=60)
    with run_in_thread(graph):
        master = start_mongo_crawl(in_workdir, graph, mongo_uri)
        assert in_workdir.wait(master, 120) == 0
    assert_each_page_and_item_once(mongo_uri, graph)


def test_database_down_mid_crawl_spools_and_drains(
    in_workdir: Cluster, own_server: MongoServer
) -> None:
    graph = SiteGraph(hosts=8, pages=100)
    total = len(expected_set(graph))
    uri = own_server.uri("nd_outage")
    with run_in_thread(graph, latency=0.004) as web:
        master = start_mongo_crawl(in_workdir, graph, uri)
        assert wait_until(lambda: len(page_requests(web)) > 0.25 * total, 60)
        own_server.stop()
        # Down for a while: the crawl goes on, results are acknowledged from the spool.
        assert wait_until(lambda: len(page_requests(web)) > 0.6 * total, 60)
        assert wait_until(lambda: "mongo_spooling" in events(in_workdir, "master"), 10)
        own_server.start()
        assert in_workdir.wait(master, 120) == 0
    assert "mongo_spool_drained" in events(in_workdir, "master")
    assert_each_page_and_item_once(uri, graph)


def test_master_killed_with_a_full_spool_resumes_exactly_once(
    in_workdir: Cluster, own_server: MongoServer
) -> None:
    graph = SiteGraph(hosts=8, pages=100)
    total = len(expected_set(graph))
    uri = own_server.uri("nd_kill")
    with run_in_thread(graph, latency=0.004) as web:
        master = start_mongo_crawl(in_workdir, graph, uri)
        assert wait_until(lambda: len(page_requests(web)) > 0.2 * total, 60)
        own_server.stop()
        assert wait_until(lambda: len(page_requests(web)) > 0.5 * total, 60)
        assert wait_until(lambda: spooled(in_workdir) > 0, 10)
        master.kill()  # SIGKILL, with acknowledged results only in the spool
        master.popen.wait(10)
        own_server.start()
        master = in_workdir.start_again("master", in_workdir.workdir / "master.yaml")
        assert in_workdir.wait(master, 120) == 0
    assert "mongo_spool_replay" in events(in_workdir, "master")
    assert_each_page_and_item_once(uri, graph)


def test_nadird_crawl_with_a_mongodb_store_and_export(mongo_uri: str, tmp_path: Path) -> None:
    graph = SiteGraph(hosts=4, pages=40)
    uri = with_options(mongo_uri, **FAST)
    out = tmp_path / "out.jsonl"
    with run_in_thread(graph):
        crawl = [
            sys.executable, "-m", "nadird", "crawl", *graph.seeds(),
            "--resolve", "*.test=127.0.0.1", "--allow-private", "--delay", "0",
            "--workers", "2", "--store", uri, "--out", str(out),
        ]  # fmt: skip
        done = forkserver.run(crawl, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["complete"] is True and summary["store"].startswith("mongodb://127.0.0.1")
    export = forkserver.run(
        [sys.executable, "-m", "nadird", "export", "--store", uri], cwd=tmp_path, timeout=60
    )
    assert export.returncode == 0, export.stderr
    rows = sorted((json.loads(line) for line in export.stdout.splitlines()), key=str)
    assert rows == sorted((json.loads(line) for line in out.read_text().splitlines()), key=str)
    reached = {
        url
        for seed in graph.seeds()
        for url in graph.reachable([seed], lambda u, s=seed: u.split("/")[2] == s.split("/")[2])
    }
    assert {row["url"] for row in rows} == reached and len(rows) == len(reached)
