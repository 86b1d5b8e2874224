"""worker.master as a list: a worker gives a silent master up for the next
one listed (worker.master_timeout), one at a time, and the master it finds
adopts the bags it held, as after a restart (real processes, ipc sockets)."""

from __future__ import annotations

import itertools
import signal
from pathlib import Path
from typing import Any

import pytest

from nadird.testing.checks import assert_exact_store, expected_set, page_requests, site_job
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow
WORKERS = ("w1", "w2")


def elsewhere(cluster: Cluster) -> tuple[str, str]:
    """A second master's addresses (another host's, for a restored master)."""
    return f"ipc://{cluster.sockdir}/control-b", f"ipc://{cluster.sockdir}/results-b"


def start_workers(cluster: Cluster, masters: list[tuple[str, str]]) -> None:
    for i, name in enumerate(WORKERS, 1):
        config = cluster.worker_config(i)
        config["worker"] |= {
            "master": [control for control, _ in masters],
            "results": [results for _, results in masters],
            # Below the masters' lease_ttl, and above the seconds a master
            # restarted on a loaded machine takes to load its state and bind
            # (before it binds, nothing tells the worker it is there).
            "master_timeout": 3.0,
        }
        cluster.start("worker", name, config)


def master_config(cluster: Cluster, graph: SiteGraph, at: tuple[str, str]) -> dict[str, Any]:
    config = cluster.master_config(jobs=site_job(graph), seeds=graph.seeds())
    # A lease period well above worker.master_timeout: a master started
    # again holds its leases for their holders about that long, and the
    # workers must find it within it (on a loaded machine too).
    config["master"] |= {"bind": at[0], "results_bind": at[1], "lease_ttl": 9.0}
    return config


def switches(cluster: Cluster, name: str) -> list[dict[str, Any]]:
    return [e for e in cluster.proc(name).logs() if e.get("event") == "master_switched"]


def registered(cluster: Cluster, name: str) -> bool:
    return any(e.get("event") == "worker_registered" for e in cluster.proc(name).logs())


def test_a_worker_gives_up_a_master_that_never_answers_for_the_next(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=2, pages=40)
    second = elsewhere(cluster)
    with run_in_thread(graph, latency=0.001):
        config = master_config(cluster, graph, second)
        config["master"]["exit_when_done"] = False  # here till both workers came
        master = cluster.start("master", "master", config)
        # The first address listed has no master behind it.
        start_workers(cluster, [(cluster.control, cluster.results), second])
        assert wait_until(lambda: all(registered(cluster, n) for n in WORKERS), 60)
        assert wait_until(lambda: len(cluster.records()) == len(expected_set(graph)), 60)
        for proc in (master, *(cluster.proc(name) for name in WORKERS)):
            proc.kill(signal.SIGTERM)
            assert cluster.wait(proc, 60) == 0
    assert_exact_store(cluster, graph)
    for name in WORKERS:
        moves = [(e["left"], e["to"]) for e in switches(cluster, name)]
        # Round the list till the master answered, one address at a time
        # (and away again once it stopped).
        assert (cluster.control, second[0]) in moves
        assert all(a[1] == b[0] for a, b in itertools.pairwise(moves))


def test_workers_follow_their_master_to_its_new_address_and_it_adopts_their_bags(
    cluster: Cluster,
) -> None:
    graph = SiteGraph(hosts=4, pages=120)
    first, second = (cluster.control, cluster.results), elsewhere(cluster)
    with run_in_thread(graph, latency=0.02) as web:
        expected = expected_set(graph)
        config = master_config(cluster, graph, first)
        cluster.start("master", "master", config)
        start_workers(cluster, [first, second])
        assert wait_until(lambda: len(page_requests(web)) > 0.3 * len(expected), 90)
        cluster.proc("master").kill(signal.SIGKILL)
        cluster.proc("master").popen.wait(10)
        # The same state, served from the other address (a restored master's).
        moved = cluster.start("master", "master-b", master_config(cluster, graph, second))
        assert cluster.wait(moved, 120) == 0
        for name in WORKERS:
            assert cluster.wait(cluster.proc(name), 30) == 0
        fetched = [f"{e.host}{e.path}" for e in page_requests(web)]
    assert_exact_store(cluster, graph)
    for name in WORKERS:
        # Round the list while the new master starts, one address at a time,
        # ending with the one that answered.
        moves = [(e["left"], e["to"]) for e in switches(cluster, name)]
        assert moves and moves[-1] == (first[0], second[0])
        assert all(to != left for left, to in moves)
        assert all(a[1] == b[0] for a, b in itertools.pairwise(moves))
    adopted = [e for e in cluster.proc("master-b").logs() if e.get("event") == "lease_adopted"]
    assert adopted, "the bags the workers held were leased again, not adopted"
    hellos = [e for e in cluster.proc("master-b").logs() if e.get("event") == "worker_joined"]
    assert {e.get("worker") for e in hellos} >= set(WORKERS), hellos[:3]
    # The bags held at the loss were adopted, not leased again from scratch:
    # fetched twice are at most the pages in flight when the workers let
    # their bags go (one a bag, 8 bags a worker).
    again = len(fetched) - len(set(fetched))
    assert again <= len(WORKERS) * 8, again


LOAD_DELAY = 3.0  # the master's state load, made slow (NADIRD_STATE_LOAD_DELAY)


def test_a_worker_waits_for_a_master_that_is_still_loading_its_state(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=1, pages=10)
    with run_in_thread(graph):
        config = master_config(cluster, graph, (cluster.control, cluster.results))
        env = {"NADIRD_STATE_LOAD_DELAY": str(LOAD_DELAY)}
        master = cluster.start("master", "master", config, env=env)
        # Bound before its state is loaded: the control socket is there first.
        bound = Path(cluster.sockdir) / "control"
        assert wait_until(bound.exists, 30)
        assert not [e for e in master.logs() if e.get("event") == "seen_loaded"], "bound late"
        worker = cluster.worker_config(1)
        # Far below the load: a master silent that long would be given up.
        worker["worker"] |= {
            "master": [cluster.control, elsewhere(cluster)[0]],
            "results": [cluster.results, elsewhere(cluster)[1]],
            "master_timeout": 1.0,
            "exit_when_done": True,
        }
        cluster.start("worker", "w1", worker)
        assert cluster.wait(master, 60) == 0
        assert cluster.wait(cluster.proc("w1"), 30) == 0
    assert_exact_store(cluster, graph)
    assert switches(cluster, "w1") == []
    events = [e.get("event") for e in master.logs()]
    # Nothing was answered, let alone leased, before the state was loaded.
    assert events.index("seen_loaded") < events.index("worker_joined")
