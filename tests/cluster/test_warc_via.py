"""What the archive says about how a page was reached, and which exchanges it
keeps: each page's metadata record names the page whose link led to it
(checked against the synthetic web's own links), in every capture (a
revisit, a dead letter queued again), and results that arrive after their
lease ended (a worker gone silent past its lease) are archived like the
others."""

from __future__ import annotations

import gzip
import json
import signal
import socket
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import zmq
from support.forgery_helpers import Forger, local_member
from support.hostile import Page, html_page, sitemap_index, sitemap_xml
from support.hostile_helpers import hostile_web
from test_recovery import dead_letters
from test_warc_crawl import read_records

from nadird.protocol.exchange import Exchange
from nadird.protocol.messages import PageResult
from nadird.testing.checks import expected_set, page_requests, site_job, start_crawl
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow


def metadata(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [json.loads(r["payload"]) for r in records if r["type"] == "metadata"]


def test_every_page_names_a_parent_that_links_to_it(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=3, pages=40)
    warc_dir = cluster.workdir / "warc"
    with run_in_thread(graph):
        master = start_crawl(cluster, graph, warc={"dir": str(warc_dir)})
        assert cluster.wait(master, 120) == 0
    seeds = set(graph.seeds())
    pages = metadata(read_records(warc_dir))
    assert len(pages) == len(cluster.records()) > len(seeds)
    for page in pages:
        if page["url"] in seeds:
            assert page["via"] == "seed", page
        else:  # the page it names holds a link to it
            assert page["url"] in graph.out_links(page["via"]), page
    # Each body travelled once, in its exchange (protocol/bodies.py): the
    # store has it all the same, the bytes the archive has.
    responses = {
        r["headers"]["WARC-Target-URI"]: r["payload"]
        for r in read_records(warc_dir)
        if r["type"] == "response"
    }
    for record in cluster.records():
        assert record.body and record.body == responses[record.url], record.url


def fetch_raw(port: int, url: str) -> Exchange:
    """A real exchange with the synthetic web: the bytes as they came back."""
    parts = urlsplit(url)
    request = f"GET {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n\r\n"
    started = time.time()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(request.encode())
        answer = b"".join(iter(lambda: conn.recv(65536), b""))
    head, _, body = answer.partition(b"\r\n\r\n")
    return Exchange(url, started, request.encode(), head + b"\r\n\r\n", body, ip="127.0.0.1")


def test_results_of_a_lease_that_ended_are_archived(cluster: Cluster) -> None:
    """A worker takes a bag, goes silent past its lease, then delivers: its
    late results are archived, beside the pages the next worker fetched."""
    graph = SiteGraph(hosts=2, pages=20)
    warc_dir = cluster.workdir / "warc"
    ctx = zmq.Context()
    with run_in_thread(graph) as web:
        master = start_crawl(
            cluster, graph, workers=0, warc={"dir": str(warc_dir)},
            master={"late_result_window": 60.0},
        )  # fmt: skip
        member = local_member(cluster)  # the keys this host's workers share
        late = Forger(ctx, cluster.control, cluster.results, "late", member, key="worker")
        bag = late.take_a_bag()
        assert bag.archive > 0  # the master asks for the exchanges
        pages = [
            PageResult(
                url=url, fp=fp, final_url=url, status=200, fetched_at=time.time(), depth=depth,
                row=row, data={"title": "late"}, exchanges=[fetch_raw(web.port, url)],
            )
            for url, fp, depth, row in zip(bag.urls, bag.fps, bag.depths, bag.rows, strict=True)
        ]  # fmt: skip
        gone = lambda: any(  # noqa: E731
            e.get("event") == "worker_left" and e.get("worker") == "late"
            for e in cluster.proc("master").logs()
        )
        assert wait_until(gone, 30)  # silent: its lease ended, its URLs went back
        late.push(pages, bag.lease, bag.epoch, "late", late.session, key="worker")
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert cluster.wait(master, 120) == 0
        late.close()
    ctx.term()
    stopped = next(e for e in cluster.proc("master").logs() if e.get("event") == "master_stopped")
    assert stopped.get("late_results") == len(pages), stopped
    records = read_records(warc_dir)
    by_late = {m["url"] for m in metadata(records) if m["node"] == "late"}
    assert by_late == set(bag.urls)
    bodies = {
        r["headers"]["WARC-Target-URI"]: r["payload"]
        for r in records
        if r["type"] == "response" and r["headers"]["WARC-Target-URI"] in by_late
    }
    assert bodies == {p.url: p.exchanges[0].body for p in pages}


def test_a_url_read_from_a_sitemap_names_the_sitemap(cluster: Cluster) -> None:
    warc_dir = cluster.workdir / "warc"
    with hostile_web() as (web, hostile):
        host = "s.test"

        def u(path: str) -> str:
            return f"http://{host}:{web.port}{path}"

        hostile.add_host(host, robots=f"User-agent: *\nAllow: /\nSitemap: {u('/sm/index.xml')}\n")
        hostile.add_page(host, "/", Page(html_page("home", ["/linked"])))
        hostile.add_html(host, "/linked")
        index = sitemap_index([u("/sm/pages.xml.gz")])
        hostile.add_page(host, "/sm/index.xml", Page(index, content_type="application/xml"))
        listed = gzip.compress(sitemap_xml([u("/listed"), u("/linked")]))
        hostile.add_page(host, "/sm/pages.xml.gz", Page(listed, content_type="application/gzip"))
        hostile.add_html(host, "/listed")
        config = cluster.master_config(
            jobs={"default": {"sitemaps": True}}, seeds=[u("/")], warc={"dir": str(warc_dir)}
        )
        master = cluster.start("master", "master", config)
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert cluster.wait(master, 60) == 0
    vias = {page["url"]: page["via"] for page in metadata(read_records(warc_dir))}
    # The page's own link wins over the sitemap's listing of the same URL.
    assert vias == {u("/"): "seed", u("/linked"): u("/"), u("/listed"): u("/sm/pages.xml.gz")}


def vias_by_url(warc_dir: Path) -> dict[str, list[str | None]]:
    """Each page's `via` in each of its captures, in the order archived."""
    found: dict[str, list[str | None]] = {}
    for page in metadata(read_records(warc_dir)):
        found.setdefault(page["url"], []).append(page["via"])
    return found


def test_a_page_fetched_again_by_its_revisit_names_its_first_via(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=1, pages=6)
    warc_dir = cluster.workdir / "warc"
    with run_in_thread(graph) as web:
        config = cluster.master_config(
            jobs=site_job(graph, revisit={"every": "1s"}),
            seeds=graph.seeds(),
            warc={"dir": str(warc_dir)},
        )
        master = cluster.start("master", "master", config)
        cluster.start("worker", "w1", cluster.worker_config(1))
        fetched = lambda: Counter(e.path for e in page_requests(web))  # noqa: E731
        expected = len(expected_set(graph))
        assert wait_until(lambda: len(fetched()) == expected and min(fetched().values()) >= 3, 60)
        master.kill(signal.SIGTERM)  # closes the file
        assert cluster.wait(master, 30) == 0
    vias = vias_by_url(warc_dir)
    assert len(vias) == expected
    seeds = set(graph.seeds())
    for url, each in vias.items():
        assert len(each) >= 2, url  # archived again (revisit records)
        assert len(set(each)) == 1, (url, each)  # the first capture's, every time
        if url in seeds:
            assert each[0] == "seed"
        else:
            assert url in graph.out_links(each[0]), each


def test_a_dead_letter_queued_again_names_the_page_that_linked_to_it(cluster: Cluster) -> None:
    warc_dir = cluster.workdir / "warc"
    with hostile_web() as (web, hostile):
        home = f"http://d.test:{web.port}/"
        hostile.add_host("d.test")
        hostile.add_page("d.test", "/", Page(html_page("home", ["/broken"])))
        hostile.add_page("d.test", "/broken", Page(b"broken", status=500))
        config = cluster.master_config(
            jobs={"default": {"max_retries": 1}},
            seeds=[home],
            master={"retry_base_delay": 0.05, "retry_max_delay": 0.2},
            warc={"dir": str(warc_dir)},
        )
        master = cluster.start("master", "master", config)
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert cluster.wait(master, 60) == 0
        state = str(cluster.workdir / "state")
        assert [letter["url"] for letter in dead_letters(state, "list")] == [home + "broken"]
        hostile.add_html("d.test", "/broken")  # fixed
        dead_letters(state, "retry")
        master = cluster.start_again("master", cluster.workdir / "master.yaml")
        cluster.start_again("w1", cluster.workdir / "w1.yaml", role="worker")
        assert cluster.wait(master, 60) == 0
    vias = vias_by_url(warc_dir)
    # Two answers of 500 (a try and its retry), then the page, queued again.
    assert vias == {home: ["seed"], home + "broken": [home] * 3}
