"""A host whose ETag is new on every answer: real master and worker processes
revisit living-web pages, and the server's own log shows If-None-Match stop
and If-Modified-Since alone earn 304s."""

from __future__ import annotations

import signal
import sqlite3

import pytest
from prometheus_client.parser import text_string_to_metric_families
from test_api import api, request

from nadird.master.revisits.etag_health import BROKEN_AFTER
from nadird.testing.checks import master_cli as cli
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.living import LivingWeb, ScaledClock
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow


def test_a_rotating_etag_host_gets_if_modified_since_alone_and_answers_304(
    cluster: Cluster,
) -> None:
    with run_in_thread() as web:
        living = LivingWeb(
            pages=4,
            seed=5,
            clock=ScaledClock(1),
            pages_per_host=4,
            rates=(0.0,),  # never change: every full answer is a wasted one
            validators={"rotating-etag-dated": 1},
            noise_share=0.0,
        ).install(web)
        job = {"revisit": {"every": "1s"}, "links": {"scope": "same-domain"}}
        config = cluster.master_config(
            jobs={"shop": job}, seeds=[{"url": u, "job": "shop"} for u in living.seeds()]
        )
        master = cluster.start("master", "master", config)
        cluster.start("worker", "w1", cluster.worker_config(1))

        def not_modified() -> int:
            return sum(e.status == 304 for e in living.entries())

        assert wait_until(lambda: not_modified() >= 8, 60), living.entries()[-10:]
        entries = living.entries()  # before the status: it counts at least these
        status = cli(cluster, "status")
        url, token = api(cluster)
        _, text = request(url, "/metrics", token)
        master.kill(signal.SIGTERM)
        cluster.wait(master, 30)
        # A restart keeps the verdict (frontier.db): it does not learn it again.
        known = len(living.entries())
        again = cluster.start_again("master", cluster.workdir / "master.yaml")
        assert wait_until(lambda: len(living.entries()) >= known + 8, 60)
        restarted = living.entries()[known:]
        again.kill(signal.SIGTERM)
        cluster.wait(again, 30)
    assert not any(e.etag_sent for e in restarted)
    assert sum(e.status == 304 for e in restarted) >= 4
    with_etag = [e for e in entries if e.etag_sent]
    # Every answer to If-None-Match was a full one (the ETag had rotated)...
    assert with_etag and all(e.status == 200 for e in with_etag)
    # ...until the host was marked: a bag or two leased before still carried it.
    assert BROKEN_AFTER <= len(with_etag) <= BROKEN_AFTER + 2 * len(living.pages)
    last_etag = max(i for i, e in enumerate(entries) if e.etag_sent)
    after = entries[last_etag + 1 :]
    # After it, the same pages were revisited with If-Modified-Since only: 304s.
    assert after and all(e.conditional and not e.etag_sent for e in after)
    assert sum(e.status == 304 for e in after) >= 8
    assert status["revisit_etag_ignored_hosts"] == 1
    assert status["revisit_etag_withheld"] >= len(after)
    metrics = {f.name: f for f in text_string_to_metric_families(text.decode())}
    assert metrics["nadird_revisit_etag_ignored_hosts"].samples[0].value == 1
    # How late the due scan ran them, as a histogram and its summary.
    lateness = {s.name: s.value for s in metrics["nadird_revisit_lateness_seconds"].samples}
    assert lateness["nadird_revisit_lateness_seconds_count"] >= len(after)
    assert 0 <= status["revisit_lateness_p50"] <= status["revisit_lateness_p95"] < 5
    with sqlite3.connect(cluster.workdir / "state" / "frontier.db") as db:
        etags = [row[0] for row in db.execute("SELECT etag FROM revisits WHERE etag != ''")]
        hosts = db.execute("SELECT state, count(*) FROM etag_hosts GROUP BY state").fetchall()
    assert etags  # kept, just not sent
    assert hosts == [("broken", 1)]
