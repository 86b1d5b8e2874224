"""robots.txt passes through the master: a worker new to a domain reuses the
file another worker fetched instead of fetching it again."""

from __future__ import annotations

import pytest

from nadird.testing.checks import site_job
from nadird.testing.cluster import Cluster, worker_address
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow


def test_one_robots_fetch_per_host_for_the_whole_cluster(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=2, pages=80)
    with run_in_thread(graph, latency=0.005) as web:
        config = cluster.master_config(
            jobs=site_job(graph), seeds=graph.seeds(), master={"bag_size": 3}
        )
        master = cluster.start("master", "master", config)
        cluster.start("worker", "w1", cluster.worker_config(1))
        cluster.start("worker", "w2", cluster.worker_config(2))
        assert cluster.wait(master, 60) == 0
        entries = web.entries()
    for host in graph.hosts:
        pages = {e.client for e in entries if e.host == host and e.path != "/robots.txt"}
        assert pages == {worker_address(1), worker_address(2)}  # both crawled the host
        robots = [e for e in entries if e.host == host and e.path == "/robots.txt"]
        assert len(robots) == 1, [(e.client, e.t_start) for e in robots]
    # ...and obeyed it: /private/ is disallowed there.
    assert not [e for e in entries if e.path.startswith("/private/")]
