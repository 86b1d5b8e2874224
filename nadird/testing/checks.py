"""Checks shared by the crawl tests: what the store and the access log must show."""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Any

from nadird.testing.cluster import Cluster
from nadird.testing.graph import SiteGraph
from nadird.testing.web import AccessEntry, SyntheticWeb

FIELDS: dict[str, Any] = {
    "title": [{"xpath": "//title/text()"}],
    "h1": [{"css": "h2.absent"}, {"css": "h1"}],
    "price": [{"regex": r"class=\"price\">\s*([^<]+)<"}, {"css": ".price"}],
    "sku": [{"css": "meta[name=sku]", "attr": "content"}],
}


def site_job(graph: SiteGraph, **extra: Any) -> dict[str, Any]:
    """A job crawling every site host of the graph (cross-host links too), minus /private/."""
    return {
        "default": {
            "fields": FIELDS,
            "links": {
                "scope": "allowed-domains",
                "allowed_domains": list(graph.hosts),
                "deny": ["/private/"],
            },
            **extra,
        }
    }


def expected_set(graph: SiteGraph) -> dict[str, int]:
    return graph.reachable(graph.seeds(), graph.in_site_scope)


def page_requests(web: SyntheticWeb) -> list[AccessEntry]:
    return [e for e in web.entries() if e.path != "/robots.txt"]


def assert_exact_store(cluster: Cluster, graph: SiteGraph) -> None:
    records = cluster.records()
    urls = [r.url for r in records]
    assert len(urls) == len(set(urls)), "a URL was stored twice"
    missing = set(expected_set(graph)) - set(urls)
    extra = set(urls) - set(expected_set(graph))
    assert not missing and not extra, (sorted(missing)[:5], sorted(extra)[:5])
    for record in records:
        assert record.error is None, (record.url, record.error)
        assert record.status == graph.status_of(record.url)


def assert_one_worker_per_domain(entries: list[AccessEntry]) -> None:
    """With domain_concurrency 1, requests to a host never overlap in time —
    they would if two workers held the same domain at once."""
    by_host: dict[str, list[AccessEntry]] = defaultdict(list)
    for entry in entries:
        by_host[entry.host].append(entry)
    for host, hits in by_host.items():
        hits.sort(key=lambda e: e.t_start)
        for before, after in itertools.pairwise(hits):
            assert after.t_start >= before.t_end, (host, before, after)


def start_crawl(cluster: Cluster, graph: SiteGraph, workers: int = 2, **master: Any) -> Any:
    config = cluster.master_config(jobs=site_job(graph), seeds=graph.seeds(), **master)
    proc = cluster.start("master", "master", config)
    for i in range(1, workers + 1):
        cluster.start("worker", f"w{i}", cluster.worker_config(i))
    return proc


def last_event(cluster: Cluster, proc_name: str, event: str) -> dict[str, Any]:
    proc = next(p for p in reversed(cluster.procs) if p.name == proc_name)
    return next(e for e in reversed(proc.logs()) if e.get("event") == event)


def master_cli(cluster: Cluster, *args: str) -> Any:
    """Run `nadird ARGS -c master.yaml` (status, nodes, submit...) and parse its JSON."""
    import json
    import sys

    from nadird.testing import forkserver

    master_yaml = str(cluster.workdir / "master.yaml")
    proc = forkserver.run([sys.executable, "-m", "nadird", *args, "-c", master_yaml])
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)
