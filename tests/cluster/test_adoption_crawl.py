"""A master killed mid-crawl and started again takes over the bags its
workers still hold: what was fetched before the kill is not fetched again,
the store is exact, and no two workers crawl one domain at once; also when
the restarted master is stalled before it has read its workers."""

from __future__ import annotations

import signal
import time
from collections import Counter
from typing import Any

import pytest

from nadird.testing.checks import (
    assert_exact_store,
    assert_one_worker_per_domain,
    expected_set,
    page_requests,
    site_job,
)
from nadird.testing.cluster import Cluster, Proc, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import AccessEntry, run_in_thread

pytestmark = pytest.mark.slow

WORKERS = 2
BAGS = 8  # Cluster.worker_config
CONCURRENCY = 1  # politeness.domain_concurrency
# Lease periods the workers keep the bags they dropped. A restarted master
# took 11 s to read its workers on a loaded machine, close to the default 10
# periods of the 1.5 s lease: these tests are about adoption, not about a
# master that came back after its workers gave up on it.
KEEP_DROPPED = 60


def start_crawl(cluster: Cluster, graph: SiteGraph, **master: Any) -> Proc:
    config = cluster.master_config(jobs=site_job(graph), seeds=graph.seeds(), **master)
    proc = cluster.start("master", "master", config)
    for i in range(1, WORKERS + 1):
        worker = cluster.worker_config(i)
        worker["worker"]["keep_dropped_periods"] = KEEP_DROPPED
        cluster.start("worker", f"w{i}", worker)
    return proc


def kill_and_restart(cluster: Cluster, master: Proc) -> tuple[Proc, float]:
    """SIGKILL the master, start it again on its state; the new master and
    when the old one was killed."""
    master.kill(signal.SIGKILL)
    killed = time.time()
    master.popen.wait(10)
    return cluster.start_again("master", cluster.workdir / "master.yaml"), killed


def fetched_twice(entries: list[AccessEntry]) -> list[tuple[str, str]]:
    counts = Counter((e.host, e.path) for e in entries)
    return [url for url, n in counts.items() if n > 1]


def answered_before(
    entries: list[AccessEntry], urls: list[tuple[str, str]], killed: float
) -> list[tuple[str, str]]:
    """Those of `urls` whose first fetch was over before the kill: their
    results reached the worker, which keeps them for the restarted master.
    Only a request still on the wire when its worker dropped its bags (after
    the kill: at its fence or the new master's reset) is fetched again."""
    first = {}
    for e in sorted(entries, key=lambda e: e.t_start):
        first.setdefault((e.host, e.path), e)
    return [url for url in urls if first[url].t_end < killed]


def events(cluster: Cluster, name: str, event: str) -> list[dict[str, object]]:
    return [e for e in cluster.proc(name).logs() if e.get("event") == event]


# What the workers and the restarted master said of the bags: enough to tell
# a request cut off by a drop from a finished bag nobody claimed.
TOLD = ("bags_dropped", "held_bags_forgotten", "lease_adopted", "adoption_refused",
        "leases_unclaimed", "lease_reclaimed", "worker_left")  # fmt: skip


def story(
    cluster: Cluster, entries: list[AccessEntry], twice: list[tuple[str, str]], killed: float
) -> str:
    """Why a URL was fetched again: each of its fetches (seconds from the
    kill, by whom) and the counts of what the processes logged of bags."""
    lines = [f"fetched twice: {twice}"]
    for host, path in twice:
        fetches = [e for e in entries if (e.host, e.path) == (host, path)]
        lines += [f"  {host}{path}: {e.t_start - killed:+.3f}..{e.t_end - killed:+.3f} "
                  f"{e.client}" for e in fetches]  # fmt: skip
    for name in ("master", "w1", "w2"):
        said = Counter(str(e.get("event")) for e in cluster.proc(name).logs())
        lines.append(f"  {name}: {', '.join(f'{k} {said[k]}' for k in TOLD if said[k])}")
    return "\n".join(lines)


def test_a_master_killed_mid_crawl_fetches_again_no_more_than_was_in_flight(
    cluster: Cluster,
) -> None:
    graph = SiteGraph(hosts=8, pages=80)
    total = len(expected_set(graph))
    with run_in_thread(graph, latency=0.01) as web:
        master = start_crawl(cluster, graph, politeness={"delay": 0.02})
        assert wait_until(lambda: len(page_requests(web)) > 0.3 * total, 60)
        master, killed = kill_and_restart(cluster, master)
        assert cluster.wait(master, 120) == 0
        entries = page_requests(web)
    twice = fetched_twice(entries)
    print(f"fetched twice: {len(twice)}")
    assert events(cluster, "master", "lease_adopted")  # the bags were taken over
    # The workers fetch on until they drop their bags (the number on the
    # wire then is not the number at the kill): those requests, at most.
    assert len(twice) <= WORKERS * BAGS * CONCURRENCY, story(cluster, entries, twice, killed)
    assert not answered_before(entries, twice, killed), story(cluster, entries, twice, killed)
    assert_exact_store(cluster, graph)
    assert_one_worker_per_domain(entries)


# The worst moment of a restart: the previous run's leases wait for their
# holders, whose Hellos and heartbeats queue up unread on the stalled
# master's socket (a loaded machine). A master that then judged the workers
# by the clock alone gave the waiting leases up and took the workers for
# silent, and their domains' URLs were fetched again (up to 68 in a run of
# scripts/bench_master_crash.py). It judges them by what it has read.
LEASE_TTL = 1.5  # Cluster.master_config
STALL = 2.5 * LEASE_TTL  # past the claim window and the workers' silence (core.CATCH_UP_PERIODS)


def test_a_restarted_master_stalled_before_reading_its_workers_still_adopts_their_bags(
    cluster: Cluster,
) -> None:
    graph = SiteGraph(hosts=8, pages=80)
    total = len(expected_set(graph))
    with run_in_thread(graph, latency=0.01) as web:
        master = start_crawl(cluster, graph, politeness={"delay": 0.02})
        assert wait_until(lambda: len(page_requests(web)) > 0.3 * total, 60)
        master, killed = kill_and_restart(cluster, master)
        # The worst moment: the previous run's leases wait for their holders
        # and nothing the workers sent has been read yet.
        assert wait_until(lambda: events(cluster, "master", "leases_waiting"), 60)
        master.popen.send_signal(signal.SIGSTOP)
        time.sleep(STALL)
        master.popen.send_signal(signal.SIGCONT)
        assert cluster.wait(master, 120) == 0
        entries = page_requests(web)
    twice = fetched_twice(entries)
    print(f"fetched twice: {len(twice)}")
    assert not events(cluster, "master", "leases_unclaimed")
    assert not [e for e in events(cluster, "master", "worker_left") if e.get("why") == "silent"]
    assert events(cluster, "master", "lease_adopted")
    # The workers dropped their bags once each (no answer while stalled):
    # the requests on the wire then, at most, are fetched again.
    assert len(twice) <= WORKERS * BAGS * CONCURRENCY, twice
    assert not answered_before(entries, twice, killed), story(cluster, entries, twice, killed)
    assert_exact_store(cluster, graph)
    assert_one_worker_per_domain(entries)


# A finished bag's results wait in the master until the store writes them:
# here for longer than the whole crawl before the kill (a slow store, a
# loaded machine). The worker keeps the bag until the master says they are
# stored (Pong.settled), so the restarted master asks for them again. A
# worker that forgot it after a few seconds, as it once did, left its lease's
# record unclaimed and its URLs were fetched again (58 here). And the
# URLs of that bag are not leased again to the worker of a newer bag of its
# domain that says hello first (2 of 6 loaded runs before).
SLOW_STORE = 60.0  # store.flush_interval: nothing is written before the kill


def test_a_finished_bag_whose_results_the_master_had_not_stored_is_not_fetched_again(
    cluster: Cluster,
) -> None:
    graph = SiteGraph(hosts=2, pages=300)
    store = {"uri": f"sqlite:///{cluster.store_path}", "flush_interval": SLOW_STORE}
    with run_in_thread(graph, latency=0.01) as web:
        master = start_crawl(cluster, graph, politeness={"delay": 0.05}, store=store)
        assert wait_until(lambda: page_requests(web), 60)
        # The first bags ended well before the kill (the worker once forgot
        # a finished bag 5 s after a master answered), the crawl goes on.
        time.sleep(7.0)
        assert len(page_requests(web)) < len(expected_set(graph))
        master, killed = kill_and_restart(cluster, master)
        assert cluster.wait(master, 120) == 0
        entries = page_requests(web)
    twice = fetched_twice(entries)
    assert not answered_before(entries, twice, killed), story(cluster, entries, twice, killed)
    assert_exact_store(cluster, graph)
