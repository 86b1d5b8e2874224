"""Alerts from a real master PROCESS to a receiver on loopback: a stalled
crawl, a domain that blocks us (the hostile web's 429s) and a worker killed
with SIGKILL each raise one alert, repeats are held back, and a resolved
notice follows; a channel that answers 500 is retried and counted while the
crawl stores exactly what it would without alerts."""

from __future__ import annotations

import signal
import time
from typing import Any

import pytest
from support.hostile_helpers import hostile_web
from support.receiver import AlertReceiver, receiver_in_thread

from nadird.testing.checks import assert_exact_store, last_event, site_job, start_crawl
from nadird.testing.cluster import Cluster, Proc, wait_until, worker_address
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow

FETCH: dict[str, Any] = {
    "connect_timeout": 1.0,
    "read_timeout": 1.0,
    "total_timeout": 3.0,
    "throttle": {"backoff_base": 0.1, "max_delay": 0.5},
}


def channel(receiver: AlertReceiver, **kw: Any) -> dict[str, Any]:
    return {"type": "webhook", "url": receiver.url(), "retry_delay": 0.05, **kw}


def alerts(rules: list[dict[str, Any]], **channels: dict[str, Any]) -> dict[str, Any]:
    return {"channels": channels, "rules": rules}


def seen(receiver: AlertReceiver, rule: str) -> list[tuple[str, str]]:
    return [(p["state"], p["subject"]) for p in receiver.payloads() if p["rule"] == rule]


def crawl(
    cluster: Cluster,
    seeds: list[str],
    alert_config: dict[str, Any],
    fetch: dict[str, Any] | None = None,
    **job: Any,
) -> None:
    config = cluster.master_config(
        jobs={"default": {"max_retries": 0, **job}},
        seeds=seeds,
        master={"bag_size": 5, "retry_base_delay": 0.05, "retry_max_delay": 0.1},
        alerts=alert_config,
    )
    master = cluster.start("master", "master", config)
    cluster.start("worker", "w1", cluster.worker_config(1, **{**FETCH, **(fetch or {})}))
    assert cluster.wait(master, 60) == 0


def test_a_stalled_crawl_raises_one_alert_then_a_resolved_notice(cluster: Cluster) -> None:
    with receiver_in_thread(AlertReceiver()) as receiver, hostile_web() as (web, hostile):
        hostile.add_host("stuck.test", robots="")
        rules = [{"type": "stall", "after": 0.5, "repeat": "30m", "channels": ["hook"]}]
        # /stall never answers: nothing is stored until the read times out
        # (3 s) and the URL, out of tries, goes to the dead letters.
        hook = channel(receiver)
        slow = {"read_timeout": 3.0, "total_timeout": 4.0}
        crawl(cluster, [f"http://stuck.test:{web.port}/stall"], alerts(rules, hook=hook), slow)
    assert seen(receiver, "stall") == [("firing", "crawl"), ("resolved", "crawl")]
    first = receiver.payloads()[0]
    assert first["value"] >= 0.5 and first["threshold"] == 0.5
    assert "no page stored for" in first["text"] and "1 URLs are queued" in first["text"]
    assert last_event(cluster, "master", "master_stopped")["alerts_sent"] == 2


def test_a_domain_answering_429_in_a_row_raises_blocked_then_resolved(cluster: Cluster) -> None:
    with receiver_in_thread(AlertReceiver()) as receiver, hostile_web() as (web, hostile):
        paths = [f"/p{i}" for i in range(6)]
        hostile.add_host("shy.test", robots="")
        hostile.add_html("shy.test", "/", paths)
        for path in paths:
            hostile.add_html("shy.test", path)
        # After the robots file and the home page: 6 answers of 429, then normal ones.
        hostile.throttle("shy.test", 429, "0", after=2, times=6)
        rules = [
            {
                "type": "blocked",
                "count": 3,
                "repeat": "30m",
                "channels": ["hook"],
                "severity": "critical",
            }
        ]
        crawl(
            cluster,
            [f"http://shy.test:{web.port}/"],
            alerts(rules, hook=channel(receiver)),
            max_retries=8,
        )
        statuses = [e.status for e in web.entries() if e.host.startswith("shy.test")]
    assert statuses.count(429) == 6
    assert seen(receiver, "blocked") == [("firing", "shy.test"), ("resolved", "shy.test")]
    firing = receiver.payloads()[0]
    assert firing["severity"] == "critical" and firing["value"] >= 3 and firing["threshold"] == 3
    assert "domain shy.test answered 403/429/503" in firing["text"]
    records = cluster.records()
    assert sorted(r.url.rsplit("/", 1)[1] for r in records) == ["", *sorted(p[1:] for p in paths)]


def test_a_killed_worker_raises_worker_gone_and_a_failing_channel_changes_nothing(
    cluster: Cluster,
) -> None:
    graph = SiteGraph(hosts=6, pages=120)
    good, bad = AlertReceiver(), AlertReceiver(mode="fail")
    with (
        receiver_in_thread(good),
        receiver_in_thread(bad),
        run_in_thread(graph, latency=0.01) as web,
    ):
        rules = [{"type": "worker_gone", "repeat": "30m", "channels": ["good", "bad"]}]
        config = alerts(rules, good=channel(good), bad=channel(bad, retries=2, queue_size=1))
        master = start_crawl(cluster, graph, workers=2, alerts=config, politeness={"delay": 0.02})
        victim = worker_address(1)
        assert wait_until(lambda: sum(e.client == victim for e in web.entries()) > 10, 60)
        cluster.proc("w1").kill(signal.SIGKILL)
        assert wait_until(lambda: seen(good, "worker_gone") == [("firing", "w1")], 30)
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert cluster.wait(master, 120) == 0
    assert seen(good, "worker_gone") == [("firing", "w1"), ("resolved", "w1")]
    assert bad.received == [] and bad.attempts == 6  # two alerts, each tried three times
    stopped = last_event(cluster, "master", "master_stopped")
    assert stopped["alerts_sent"] == 2 and stopped["alerts_retries"] == 4
    assert stopped["alerts_failed"] == 2
    assert_exact_store(cluster, graph)


def left_silent(master: Proc, worker: str) -> bool:
    return any(
        e.get("event") == "worker_left" and e.get("worker") == worker and e.get("why") == "silent"
        for e in master.logs()
    )


def test_a_killed_worker_is_reported_back_only_when_it_registers_again(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=6, pages=100)
    receiver = AlertReceiver()
    with receiver_in_thread(receiver), run_in_thread(graph, latency=0.01) as web:
        rules = [{"type": "worker_gone", "after": 2, "repeat": "30m", "channels": ["hook"]}]
        master = start_crawl(
            cluster,
            graph,
            alerts=alerts(rules, hook=channel(receiver)),
            politeness={"delay": 0.2},  # about 30 s of crawl: w1 comes back before the end
            master={"node_timeout": 4.0},
        )
        victim = worker_address(1)
        assert wait_until(lambda: sum(e.client == victim for e in web.entries()) > 10, 60)
        cluster.proc("w1").kill(signal.SIGKILL)
        assert wait_until(lambda: seen(receiver, "worker_gone") == [("firing", "w1")], 30)
        # The master marks it offline (silent past node_timeout): it is not back.
        assert wait_until(lambda: left_silent(master, "w1"), 30)
        time.sleep(2.0)  # two more ticks of the alerts
        assert seen(receiver, "worker_gone") == [("firing", "w1")]
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert wait_until(lambda: len(seen(receiver, "worker_gone")) == 2, 30)
        assert cluster.wait(master, 120) == 0
    assert seen(receiver, "worker_gone") == [("firing", "w1"), ("resolved", "w1")]
    resolved = receiver.payloads()[-1]
    assert "worker w1 is back" in resolved["text"]
    assert_exact_store(cluster, graph)


def test_job_finished_is_sent_for_a_crawl_that_did_work_and_not_on_a_restart(
    cluster: Cluster,
) -> None:
    graph = SiteGraph(hosts=2, pages=20)
    receiver = AlertReceiver()
    rules = [{"type": "job_finished", "severity": "info", "channels": ["hook"]}]
    with receiver_in_thread(receiver), run_in_thread(graph) as web:
        hook = alerts(rules, hook=channel(receiver))
        # No seeds: nothing to crawl, nothing finished.
        idle = cluster.master_config(jobs=site_job(graph), alerts=hook)
        assert cluster.wait(cluster.start("master", "idle", idle), 60) == 0
        master = start_crawl(cluster, graph, workers=1, alerts=hook)
        assert cluster.wait(master, 60) == 0
        assert len(receiver.payloads()) == 1
        # The same crawl started again: its pages are all stored, nothing done.
        again = cluster.start_again("master", cluster.workdir / "master.yaml")
        assert cluster.wait(again, 60) == 0
        assert web.entries()
    [finished] = receiver.payloads()
    stored = len(cluster.records())
    assert finished["rule"] == "job_finished" and finished["value"] == stored
    assert (
        f"crawl finished: {stored} pages stored in this run ({stored} in the store)"
        in (finished["text"])
    )
    assert "threshold" not in finished
    assert any(e.get("event") == "crawl_complete" for e in again.logs())
