"""Logs and metrics against a real crawl: one URL's life traced through the
JSON log lines of the master and the workers, each page counted once with
the same definitions in status, metrics and log, and totals that survive a
restart."""

from __future__ import annotations

import socket
from collections import defaultdict
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from test_api import api, request

from nadird.testing.checks import master_cli as cli
from nadird.testing.checks import site_job
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow


def dead_url() -> str:
    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        return f"http://dead.test:{probe.getsockname()[1]}/"


def by_event(events: list[dict[str, Any]]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """event name -> url -> the events of that URL, in log order."""
    table: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for event in events:
        if "url" in event:
            table[event["event"]][event["url"]].append(event)
    return table


def debug_crawl(cluster: Cluster, graph: SiteGraph, seeds: list[str]) -> None:
    config = cluster.master_config(
        log_level="debug",
        jobs=site_job(graph, max_retries=1),
        seeds=seeds,
        master={"exit_when_done": False, "retry_base_delay": 0.05, "retry_max_delay": 0.1},
    )
    cluster.start("master", "master", config)
    for index in (1, 2):
        cluster.start("worker", f"w{index}", {**cluster.worker_config(index), "log_level": "debug"})
    api(cluster)  # up, with its token written
    assert wait_until(lambda: cli(cluster, "status")["complete"], 60)


def test_one_url_is_traced_from_admission_to_the_store(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=2, pages=25)
    dead = dead_url()
    with run_in_thread(graph):
        debug_crawl(cluster, graph, [*graph.seeds(), dead])
    records = {r.url: r for r in cluster.records()}
    master = by_event(cluster.proc("master").logs())
    worker_events = {name: by_event(cluster.proc(name).logs()) for name in ("w1", "w2")}
    assert set(master["url_stored"]) == set(records)
    for url, record in records.items():
        [admitted] = master["url_admitted"][url]
        assert admitted["domain"] == url.split("/")[2].split(":")[0]
        assert admitted["referer"] is None or admitted["referer"] in records
        stored = master["url_stored"][url][-1]  # (a late duplicate would be stored again)
        lease, worker = stored["lease"], stored["worker"]
        assert stored["status"] == record.status and stored["domain"] == admitted["domain"]
        [leased] = [e for e in master["url_leased"][url] if e["lease"] == lease]
        assert leased["worker"] == worker and leased["attempt"] == 1
        [crawled] = [e for e in worker_events[worker]["page_crawled"][url] if e["lease"] == lease]
        assert crawled["node"] == worker and crawled["lease"] == lease
        assert crawled["domain"] == admitted["domain"] and crawled["status"] == record.status
        assert crawled["bytes"] > 0 and crawled["ms"] > 0 and crawled["attempt"] == 1
        assert stored["ts"] >= crawled["ts"] >= leased["ts"] >= admitted["ts"]
    # The dead URL: two attempts under two leases, a retry, then the dead letters.
    first, second = master["url_leased"][dead]
    assert (first["attempt"], second["attempt"]) == (1, 2) and first["lease"] != second["lease"]
    [retried] = master["url_retried"][dead]
    assert retried["lease"] == first["lease"] and retried["error"].startswith("connect")
    [letter] = master["dead_letter"][dead]
    assert letter["lease"] == second["lease"] and letter["domain"] == "dead.test"
    attempts = [e for w in worker_events.values() for e in w["page_crawled"][dead]]
    assert sorted(e["attempt"] for e in attempts) == [1, 2]
    assert all(e["status"] == 0 and e["error"].startswith("connect") for e in attempts)


def test_a_404_is_one_fetched_page_in_status_metrics_and_histogram(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=2, pages=25)
    with run_in_thread(graph):
        debug_crawl(cluster, graph, [*graph.seeds(), dead_url()])
        status = cli(cluster, "status")
        url, token = api(cluster)
        _, text = request(url, "/metrics", token)
    records = cluster.records()
    fetched = [r for r in records if r.status > 0]
    missing = [r for r in records if r.status == 404]
    assert missing and all(r.error is None for r in missing)
    metrics = {f.name: f for f in text_string_to_metric_families(text.decode())}

    def sample(family: str, name: str, **labels: str) -> float:
        return next(
            s.value
            for s in metrics[family].samples
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
        )

    # The 404s are fetched pages without an error, counted by status class.
    assert status["pages_ok"] == len(records) == sample("nadird_pages_ok", "nadird_pages_ok_total")
    assert status.get("pages_error", 0) == 0
    assert status["http_status"] == {"2xx": len(fetched) - len(missing), "4xx": len(missing)}
    assert sample("nadird_http_status", "nadird_http_status_total", **{"class": "4xx"}) == len(
        missing
    )
    # Errors are failed attempts with an error kind: the dead URL's two tries.
    assert status["errors_by_kind"] == {"connect": 2}
    kinds = {s.labels["kind"]: s.value for s in metrics["nadird_errors"].samples}
    assert kinds == {"connect": 2}
    # Every fetched page was timed once.
    count = sample("nadird_fetch_seconds", "nadird_fetch_seconds_count")
    assert count == len(fetched)
    assert sample("nadird_fetch_seconds", "nadird_fetch_seconds_sum") > 0
    assert status["stored_total"] == status["stored_this_run"] == len(records)


def test_totals_after_a_restart_are_the_stores(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=2, pages=15)
    with run_in_thread(graph):
        config = cluster.master_config(jobs=site_job(graph), seeds=graph.seeds())
        master = cluster.start("master", "master", config)
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert cluster.wait(master, 60) == 0
    stored = len(cluster.records())
    assert stored > 20
    again = cluster.start_again("master", cluster.workdir / "master.yaml")
    assert cluster.wait(again, 30) == 0
    # The log file is appended to: the second run's lines come last.
    first, second = [e for e in again.logs() if e.get("event") == "crawl_complete"]
    assert first["stored_total"] == first["stored_this_run"] == stored
    assert second["stored_total"] == stored and second["stored_this_run"] == 0
