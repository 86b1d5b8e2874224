"""A master with no article job does without numpy (the near-duplicate
index's only user): it starts sooner and holds ~10 MB less
(docs/BENCHMARKS.md). Read from outside, in the process's memory map."""

from __future__ import annotations

import signal
from pathlib import Path

from nadird.testing.checks import expected_set, site_job
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread


def numpy_mapped(pid: int) -> bool:
    """numpy's compiled core is in the process's memory once it is imported."""
    return "/numpy/" in Path(f"/proc/{pid}/maps").read_text()


def test_a_master_without_article_jobs_crawls_without_importing_numpy(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=1, pages=10)
    with run_in_thread(graph, latency=0.001):
        config = cluster.master_config(
            jobs=site_job(graph), seeds=graph.seeds(), master={"exit_when_done": False}
        )
        master = cluster.start("master", "master", config)
        cluster.start("worker", "w1", cluster.worker_config(1))
        # Every page stored: the results path (near-duplicate check included) ran.
        assert wait_until(lambda: len(cluster.records()) == len(expected_set(graph)), 60)
        assert master.popen.poll() is None
        assert not numpy_mapped(master.popen.pid)
        master.kill(signal.SIGTERM)
        assert cluster.wait(master, 30) == 0
