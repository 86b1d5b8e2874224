"""What the archive says about how a page was reached, and which exchanges it
keeps: each page's metadata record names the page whose link led to it
(checked against the synthetic web's own links), and results that arrive
after their lease ended (a stalled worker's) are archived like the others."""

from __future__ import annotations

import json
import signal
import time
from collections import Counter
from typing import Any
from urllib.parse import urlsplit

import pytest
from test_warc_cluster import scrape
from test_warc_crawl import read_records

from nadird.testing.checks import page_requests, start_crawl
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow


def metadata(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [json.loads(r["payload"]) for r in records if r["type"] == "metadata"]


def host_path(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return (parts.hostname or "", parts.path + (f"?{parts.query}" if parts.query else ""))


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


def late_results(cluster: Cluster) -> float:
    return scrape(cluster).get("nadird_late_results_total", 0.0)


def test_results_of_a_lease_that_ended_are_archived(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=2, pages=60)
    warc_dir = cluster.workdir / "warc"
    # Slow answers: the worker has fetches in flight when it stalls.
    with run_in_thread(graph, latency=0.2) as web:
        master = start_crawl(
            cluster,
            graph,
            workers=1,
            warc={"dir": str(warc_dir)},
            master={"late_result_window": 60.0},
        )
        assert wait_until(lambda: len(page_requests(web)) >= 10, 60)
        stalled = cluster.proc("w1")
        for _ in range(3):  # a stall whose fetches all end before it sends nothing late
            stalled.kill(signal.SIGSTOP)
            time.sleep(3.0)  # past lease_ttl (1.5 s): its leases end, their URLs go back
            stalled.kill(signal.SIGCONT)
            if wait_until(lambda: late_results(cluster) > 0, 5):
                break
        assert cluster.wait(master, 120) == 0
        served = Counter(host_path(f"http://{e.host}{e.path}") for e in page_requests(web))
    stopped = next(e for e in cluster.proc("master").logs() if e.get("event") == "master_stopped")
    assert stopped.get("late_results", 0) > 0, stopped
    records = read_records(warc_dir)
    described = {page["url"] for page in metadata(records)}
    # Every page stored has its records, those stored from late results too.
    assert {r.url for r in cluster.records()} <= described
    answers = [r for r in records if r["type"] in ("response", "revisit")]
    archived = Counter(host_path(r["headers"]["WARC-Target-URI"]) for r in answers)
    assert archived.keys() == served.keys() and archived <= served
