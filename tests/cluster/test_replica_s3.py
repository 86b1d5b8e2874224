"""An s3:// replica on an S3-compatible service (moto's server on loopback):
the master replicates its state there while it crawls; its machine is lost
mid-crawl (the master and Litestream killed, the state directory deleted);
`nadird restore -c` fetches the state back from the bucket, and a master
started on it completes the crawl with every page stored once, without
fetching again what the replica had (the synthetic web's access log)."""

from __future__ import annotations

import json
import time
from datetime import datetime

import pytest
from support.s3_server import CREDENTIALS, s3_server
from test_replica_restore import (
    SETTLED,
    WORKERS,
    lose_the_machine,
    replica_metrics,
    restore,
    stored_urls,
)

from nadird.testing.checks import expected_set, page_requests, start_crawl
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow


def replicating_since(cluster: Cluster) -> float | None:
    """When the master started Litestream (epoch seconds), from its log."""
    started = [e for e in cluster.proc("master").logs() if e.get("event") == "replica_started"]
    return datetime.fromisoformat(started[0]["ts"]).timestamp() if started else None


def test_a_state_replicated_to_an_s3_service_is_restored_from_it_and_the_crawl_goes_on(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)  # Litestream's, as the master's environment
    # Litestream 0.5.17 cannot start an S3 client with a custom CA bundle
    # ("unable to add custom RootCAs HTTPClient"): none is needed over http.
    monkeypatch.delenv("AWS_CA_BUNDLE", raising=False)
    graph = SiteGraph(hosts=4, pages=60)
    state = cluster.workdir / "state"
    store = {"uri": f"sqlite:///{state / 'pages.db'}", "flush_interval": 0.1}
    with s3_server("crawl-state") as endpoint, run_in_thread(graph, latency=0.01) as web:
        replica = f"s3://crawl-state/nadird/prod?endpoint={endpoint}&forcePathStyle=true"
        master = {"replica": replica, "replica_sync_interval": 0.1, "snapshot_interval": 1.0}
        expected = set(expected_set(graph))
        start_crawl(cluster, graph, master=master, store=store, politeness={"delay": 0.05})
        # Every database on the bucket: a lag within SETTLED once Litestream
        # has run longer than that (until then, one never reported on
        # counts as behind only since Litestream started).
        assert wait_until(lambda: replicating_since(cluster) is not None, 60)
        since = replicating_since(cluster)
        assert since is not None
        caught_up = lambda: (  # noqa: E731
            time.time() > since + SETTLED
            and replica_metrics(cluster)["nadird_replica_lag_seconds"] < SETTLED
        )
        assert wait_until(caught_up, 60, interval=0.2)
        assert wait_until(lambda: len(page_requests(web)) > 0.4 * len(expected), 90)
        lost_at = time.time()
        lose_the_machine(cluster, state)
        done_before = {
            f"http://{e.host}{e.path}" for e in page_requests(web) if e.t_end < lost_at - SETTLED
        }

        done = restore("-c", str(cluster.workdir / "master.yaml"))
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert {"frontier.db", "robots.db", "pages.db"} <= set(report["restored"])
        assert report["replica"] == replica and report["generation"]["n"] == 1
        assert report["crawl"]["known"] >= 0.4 * len(expected)
        restarted_at = time.time()
        again = cluster.start_again("master", cluster.workdir / "master.yaml")
        for name in WORKERS:
            cluster.start_again(name, cluster.workdir / f"{name}.yaml", role="worker")
        assert cluster.wait(again, 180) == 0
        after = [e for e in page_requests(web) if e.t_start >= restarted_at]

    urls = stored_urls(state / "pages.db")
    assert len(urls) == len(set(urls)), "a URL was stored twice"
    assert set(urls) == expected, (sorted(set(urls) ^ expected)[:5], len(urls))
    fetched_again = {f"http://{e.host}{e.path}" for e in after} & done_before
    assert not fetched_again, sorted(fetched_again)[:5]
