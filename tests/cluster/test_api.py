"""The management API, /metrics, the CLI on top, and capability routing."""

from __future__ import annotations

import json
import signal
import socket
import urllib.error
import urllib.request
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from nadird.testing.checks import master_cli as cli
from nadird.testing.checks import page_requests, site_job
from nadird.testing.cluster import Cluster, Proc, wait_until, worker_address
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow


def api(cluster: Cluster) -> tuple[str, str]:
    state = cluster.workdir / "state"
    assert wait_until(lambda: (state / "api.json").exists(), 20)
    url = json.loads((state / "api.json").read_text())["url"]
    return url, (state / "api.token").read_text().strip()


def request(
    url: str, path: str, token: str | None, method: str = "GET", body: bytes | None = None
) -> tuple[int, bytes]:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url + path, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


ROUTES = [
    ("GET", "/api/stats", None),
    ("GET", "/api/nodes", None),
    ("GET", "/api/domains/site-0.test", None),
    ("POST", "/api/seeds", b'{"urls": ["http://site-0.test/x"]}'),
    ("POST", "/api/jobs/default/pause", None),
    ("POST", "/api/jobs/default/resume", None),
    ("GET", "/api/openapi.yaml", None),
    ("GET", "/metrics", None),
    ("DELETE", "/api/jobs/other", None),
]


def start_master(cluster: Cluster, graph: SiteGraph, **extra: Any) -> Proc:
    jobs = {**site_job(graph), "other": {}}
    config = cluster.master_config(
        jobs=jobs, seeds=graph.seeds(), master={"exit_when_done": False}, **extra
    )
    return cluster.start("master", "master", config)


def test_every_route_needs_the_token_but_liveness(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=2, pages=20, port=8099)
    start_master(cluster, graph)
    url, token = api(cluster)
    assert request(url, "/healthz", None)[0] == 200
    for method, path, body in ROUTES:
        assert request(url, path, None, method, body)[0] == 401, path
        assert request(url, path, "x" * len(token), method, body)[0] == 401, path
        status, text = request(url, path, token, method, body)
        assert status == 200, (path, text)
    log = (cluster.workdir / "master.log").read_text()
    assert token not in log


def test_an_unknown_api_path_or_method_answers_a_json_error(cluster: Cluster) -> None:
    """/api/nope used to answer aiohttp's plain "404: Not Found"."""
    start_master(cluster, SiteGraph(hosts=1, pages=5, port=8099))
    url, token = api(cluster)
    status, body = request(url, "/api/nope", token)
    assert status == 404
    assert json.loads(body) == {"error": "no such route: /api/nope (see /api/openapi.yaml)"}
    status, body = request(url, "/api/stats", token, "POST", b"{}")
    assert status == 405
    assert json.loads(body) == {"error": "POST is not allowed on /api/stats"}
    assert request(url, "/api/nope", None)[0] == 401  # the token first, as everywhere


def test_bad_bodies_get_400_or_413_with_a_message(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=1, pages=5, port=8099)
    start_master(cluster, graph, api={"port": 0, "max_body_bytes": 2048})
    url, token = api(cluster)
    for body in (
        b"not json",
        b"[1, 2]",
        b'{"urls": "x"}',
        b'{"urls": [1]}',
        b'{"urls": ["http://a.test/"], "job": "nope"}',
    ):
        status, text = request(url, "/api/seeds", token, "POST", body)
        assert status == 400 and json.loads(text)["error"], body
    status, _ = request(
        url,
        "/api/seeds",
        token,
        "POST",
        json.dumps({"urls": ["http://a.test/" + "x" * 4000]}).encode(),
    )
    assert status == 413
    assert request(url, "/api/jobs/nope/pause", token, "POST")[0] == 404
    assert request(url, "/api/domains/unknown.test", token)[0] == 404


def test_metrics_parse_and_status_matches_the_store(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=3, pages=30)
    with run_in_thread(graph):
        start_master(cluster, graph)
        url, token = api(cluster)
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert wait_until(lambda: cli(cluster, "status")["complete"], 60)
        status = cli(cluster, "status")
        nodes = cli(cluster, "nodes")["nodes"]
        _, metrics = request(url, "/metrics", token)
    families = {f.name: f for f in text_string_to_metric_families(metrics.decode())}
    stored = len(cluster.records())
    assert status["stored_this_run"] == stored and status["queued"] == 0
    assert status["stored_total"] == stored
    assert status["jobs"]["default"]["admitted"] == stored
    assert [n["node"] for n in nodes] == ["w1"] and nodes[0]["status"] == "idle"
    assert nodes[0]["host"] == socket.gethostname()  # where to find w1
    assert families["nadird_pages_ok"].samples[0].value == stored
    assert families["nadird_queue_urls"].samples[0].value == 0
    assert families["nadird_fetch_seconds"].type == "histogram"
    assert families["nadird_lease_seconds"].type == "histogram"
    assert "nadird_workers" in families and "nadird_errors" in families


def test_pause_resume_and_submit_through_the_cli(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=2, pages=20)
    with run_in_thread(graph) as web:
        start_master(cluster, graph)
        api(cluster)
        assert cli(cluster, "pause", "default")["paused"] is True
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert wait_until(lambda: cli(cluster, "nodes")["nodes"], 20)
        assert not wait_until(lambda: page_requests(web), 1.5)  # paused: nothing fetched
        cli(cluster, "resume", "default")
        assert wait_until(lambda: cli(cluster, "status")["complete"], 60)
        before = len(cluster.records())
        extra = f"http://site-0.test:{graph.port}/p/7"  # an orphan: only reachable this way
        assert cli(cluster, "submit", extra)["admitted"] == 1
        assert wait_until(lambda: len(cluster.records()) == before + 1, 30)
    assert extra in {r.url for r in cluster.records()}


def test_a_job_requiring_a_capability_goes_only_to_capable_workers(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=4, pages=40)
    js_hosts, plain_hosts = graph.hosts[:2], graph.hosts[2:]
    with run_in_thread(graph) as web:
        jobs = {
            "default": {"links": {"scope": "same-domain"}},
            "render": {"links": {"scope": "same-domain"}, "requires": ["javascript"]},
        }
        seeds = [{"url": graph.url(h, "/"), "job": "render"} for h in js_hosts]
        seeds += [graph.url(h, "/") for h in plain_hosts]
        master = cluster.start("master", "master", cluster.master_config(jobs=jobs, seeds=seeds))
        cluster.start("worker", "w1", cluster.worker_config(1))
        capable = cluster.worker_config(2)
        capable["worker"]["capabilities"] = ["html", "javascript"]
        cluster.start("worker", "w2", capable)
        assert cluster.wait(master, 60) == 0
        entries = page_requests(web)
    render_clients = {e.client for e in entries if e.host in js_hosts}
    assert render_clients == {worker_address(2)}
    assert worker_address(1) in {e.client for e in entries if e.host in plain_hosts}


def test_a_second_live_worker_with_the_same_node_id_is_refused(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=2, pages=40)
    with run_in_thread(graph, latency=0.01) as web:
        start_master(cluster, graph)
        api(cluster)
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert wait_until(lambda: cli(cluster, "nodes")["nodes"], 20)
        twin = cluster.worker_config(2)  # its own source address, but the name of w1
        twin["node"] = "w1"
        impostor = cluster.start("worker", "w1-twin", twin)
        assert wait_until(
            lambda: any(e.get("event") == "refused_by_master" for e in impostor.logs()), 20
        )
        assert wait_until(lambda: cli(cluster, "status")["complete"], 60)
        entries = page_requests(web)
    assert {e.client for e in entries} == {worker_address(1)}
    refused = [e for e in cluster.proc("master").logs() if e.get("event") == "worker_refused"]
    assert refused and refused[0]["worker"] == "w1"


BAD_BODIES = [
    (b"[" * 100_000 + b"]" * 100_000, "nested deeper than"),
    (b'{"urls": ' + b"[" * 20 + b"]" * 20 + b"}", "nested deeper than"),
    (b"", "not JSON"),
    (b'{"urls": ["http://a.test/"],}', "not JSON: Expecting property name"),
    (b'{"urls": [NaN]}', "NaN is not a JSON number"),
    (b'{"urls": ["http://a.test/\xff"]}', "not UTF-8"),
    (b'"just a string"', "must be a JSON object, got a string"),
    (b'{"job": "default"}', "lacks the key 'urls'"),
    (b'{"urls": ["http://a.test/"], "jbo": "default"}', "unknown key 'jbo'"),
    (b'{"urls": [{"url": "http://a.test/", "jobs": "x"}]}', "unknown key 'jobs' in urls[0]"),
    (b'{"urls": [{"job": "default"}]}', "urls[0] lacks the key 'url'"),
    (b'{"urls": [["http://a.test/"]]}', "urls[0] must be a string or an object, got an array"),
    (b'{"urls": [{"url": 7}]}', "urls[0].url must be a string, got a number"),
    (b'{"urls": [], "job": null}', "job must be a string, got null"),
    (json.dumps({"urls": ["http://a.test/"] * 10_001}).encode(), "at most 10000 URLs"),
]


def test_any_bad_body_is_a_400_that_says_what_is_wrong(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=1, pages=5, port=8099)
    start_master(cluster, graph)  # the default 1 MiB body limit: room for deep nesting
    url, token = api(cluster)
    for body, reason in BAD_BODIES:
        status, text = request(url, "/api/seeds", token, "POST", body)
        assert status == 400, (body[:60], text)
        assert reason in json.loads(text)["error"], (body[:60], text)
    for path in ("/api/jobs/default/pause", "/api/jobs/default/resume"):
        status, text = request(url, path, token, "POST", b'{"force": true}')
        assert status == 400 and "unknown key 'force'" in json.loads(text)["error"]
        assert request(url, path, token, "POST", b"{}")[0] == 200
    status, text = request(url, "/api/jobs/other", token, "DELETE", b"[" * 50_000)
    assert status == 400 and "nested deeper" in json.loads(text)["error"]
    assert request(url, "/healthz", None)[0] == 200  # still serving
    assert "Traceback" not in (cluster.workdir / "master.log").read_text()


def test_seeds_say_which_were_refused_and_why(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=2, pages=5, port=8099)
    start_master(cluster, graph)
    url, token = api(cluster)
    good = f"http://site-0.test:{graph.port}/p/3"
    body = {
        "urls": [
            "ftp://site-0.test/file",
            good,
            "http://",
            {"url": f"http://site-1.test:{graph.port}/p/3", "job": "nope"},
            {"url": f"http://site-1.test:{graph.port}/p/4", "job": "other"},
        ]
    }
    status, text = request(url, "/api/seeds", token, "POST", json.dumps(body).encode())
    assert status == 200, text
    answer = json.loads(text)
    assert answer["submitted"] == 5 and answer["admitted"] == 2
    refused = answer["refused"]
    assert [(r["index"], r["url"]) for r in refused] == [
        (0, "ftp://site-0.test/file"),
        (2, "http://"),
        (3, f"http://site-1.test:{graph.port}/p/3"),
    ]
    assert "not an http(s) URL" in refused[0]["reason"]
    assert "no host" in refused[1]["reason"]
    assert refused[2]["reason"] == "unknown job 'nope'" and refused[2]["job"] == "nope"
    # The refused seeds were not queued; the admitted ones were, in their job.
    stats = cli(cluster, "status")
    assert stats["jobs"]["other"]["admitted"] == 1
    again = request(url, "/api/seeds", token, "POST", json.dumps({"urls": [good]}).encode())
    assert json.loads(again[1]) == {"admitted": 0, "submitted": 1, "refused": []}


def test_a_finished_domain_is_reported_done_even_after_a_restart(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=2, pages=12)
    with run_in_thread(graph):
        master = start_master(cluster, graph)
        url, token = api(cluster)
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert wait_until(lambda: cli(cluster, "status")["complete"], 60)
        status, text = request(url, "/api/domains/site-0.test", token)
    pages = len([r for r in cluster.records() if "//site-0.test" in r.url])
    assert status == 200, text
    info = json.loads(text)
    assert info["done"] is True and info["queued"] == 0 and info["leased"] is False
    assert pages > 1 and info["results_since_start"] == pages
    assert info["dead_letters"] == 0
    master.kill(signal.SIGTERM)
    assert cluster.wait(master, 30) == 0
    (cluster.workdir / "state" / "api.json").unlink()
    cluster.start_again("master", cluster.workdir / "master.yaml")
    url, token = api(cluster)
    for name in ("site-0.test", "WWW.site-0.test"):  # a host answers for its domain
        status, text = request(url, f"/api/domains/{name}", token)
        assert status == 200, text
        info = json.loads(text)
        assert info["domain"] == "site-0.test" and info["done"] is True
        assert info["queued"] == 0 and info["results_since_start"] == 0
    status, text = request(url, "/api/domains/never-seen.test", token)
    assert status == 404 and "never seen" in json.loads(text)["error"]
