"""Results a worker fetched while the master was down reach the restarted
master once, even when the worker, cut off for long, has forgotten the bags
they came from: the master takes them for the leases it recorded, and no URL
is fetched twice."""

from __future__ import annotations

import signal
import time
from collections import Counter
from typing import Any

from nadird.testing.checks import assert_exact_store, page_requests, site_job
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.frame_sender import Api
from nadird.testing.graph import SiteGraph
from nadird.testing.web import AccessEntry, SyntheticWeb, run_in_thread

TTL = 2.0  # the worker drops its bags 0.9 of it after the master's last word
DELAY = 2.5  # seconds between requests to the one site
QUIET = 1.2  # the master killed this long after the last request ended
KEEP = 1.0  # ... and forgets them one lease period after (worker/held.py)


def settled(api: Api, web: SyntheticWeb) -> bool:
    """Between two requests, everything fetched so far stored and a second
    gone by (the frontier commits at least once a second): results sent from
    now on wait in the worker, none is on its way to the master."""
    entries = page_requests(web)
    if not QUIET <= time.time() - entries[-1].t_end < DELAY - 0.3:
        return False
    stats = api.stats()
    return bool(stats["stored_this_run"] >= len(entries) and stats["store_pending"] == 0)


def fetched_twice(entries: list[AccessEntry]) -> list[tuple[str, str]]:
    counts = Counter((e.host, e.path) for e in entries)
    return [url for url, n in counts.items() if n > 1]


def events(cluster: Cluster, name: str, event: str) -> list[dict[str, Any]]:
    return [e for e in cluster.proc(name).logs() if e.get("event") == event]


def test_results_held_through_a_long_master_outage_are_stored_once(cluster: Cluster) -> None:
    # 5 URLs, 2.5 s apart, each felt: two or three fetched before the kill,
    # one while the master is down, the rest after its restart.
    graph = SiteGraph(hosts=1, pages=4)
    with run_in_thread(graph, latency=0.002) as web:
        config = cluster.master_config(
            jobs=site_job(graph),
            seeds=graph.seeds(),
            master={"lease_ttl": TTL},
            # Requests far apart: none is on the wire when the master is
            # killed or when the worker drops its bags.
            politeness={"delay": DELAY},
        )
        master = cluster.start("master", "master", config)
        worker = cluster.worker_config(1)
        worker["worker"]["keep_dropped_periods"] = KEEP
        cluster.start("worker", "w1", worker)
        assert wait_until(lambda: len(page_requests(web)) >= 2, 60)
        api = Api(cluster)
        assert wait_until(lambda: settled(api, web), 60, interval=0.1)
        master.kill(signal.SIGKILL)
        master.popen.wait(10)
        killed = time.time()
        assert wait_until(lambda: events(cluster, "w1", "bags_dropped"), 30)
        held = [e for e in page_requests(web) if e.t_start > killed]
        # Its results stay queued on its socket.
        assert wait_until(lambda: events(cluster, "w1", "held_bags_forgotten"), 30)
        master = cluster.start_again("master", cluster.workdir / "master.yaml")
        assert cluster.wait(master, 120) == 0
        entries = page_requests(web)
    twice = fetched_twice(entries)
    print(f"fetched while the master was down: {len(held)}, fetched twice: {len(twice)}")
    assert held
    assert not twice, twice
    assert_exact_store(cluster, graph)
