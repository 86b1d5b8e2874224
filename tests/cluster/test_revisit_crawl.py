"""Continuous crawling end to end: real master and worker processes, real
sockets, pages that change on a loopback server (testing/changing.py)."""

from __future__ import annotations

import itertools
import json
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from support.changing import PREFIX, ChangingPages
from test_api import api, request

from nadird.testing import forkserver
from nadird.testing.checks import master_cli as cli
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.living import LivingWeb, ScaledClock
from nadird.testing.web import SyntheticWeb, run_in_thread

pytestmark = pytest.mark.slow

PAGES = [f"{PREFIX}a", f"{PREFIX}b"]
FIELDS = {"title": [{"css": ".title"}], "price": [{"css": ".price"}]}


def _shop(pages: ChangingPages) -> None:
    pages.set(PREFIX, "index", 0, links=PAGES)
    pages.set(PAGES[0], "Kettle", 299)
    pages.set(PAGES[1], "Toaster", 45)


def _site(web: SyntheticWeb) -> str:
    return f"http://shop.test:{web.port}"


def _start(cluster: Cluster, web: SyntheticWeb, job: dict[str, Any]) -> Any:
    job = {"links": {"scope": "same-domain"}, **job}
    seed = {"url": _site(web) + PREFIX, "job": "shop"}
    config = cluster.master_config(jobs={"shop": job}, seeds=[seed])
    master = cluster.start("master", "master", config)
    cluster.start("worker", "w1", cluster.worker_config(1))
    return master


def _fetches(web: SyntheticWeb) -> Counter[str]:
    return Counter(e.path for e in web.entries() if e.path.startswith(PREFIX))


def _versions(cluster: Cluster) -> list[tuple[str, str]]:
    with sqlite3.connect(cluster.store_path) as db:
        rows = db.execute("SELECT url, data FROM changes ORDER BY url, fetched_at").fetchall()
    return [(url, data) for url, data in rows]


def _export_changes(cluster: Cluster, *extra: str) -> list[dict[str, Any]]:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "nadird",
            "export",
            "--changes",
            "--store",
            f"sqlite:///{cluster.store_path}",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [json.loads(line) for line in out.stdout.splitlines()]


def _stop(cluster: Cluster, master: Any) -> None:
    master.kill(signal.SIGTERM)
    cluster.wait(master, 30)


def test_fixed_revisits_304s_keep_the_record_and_a_price_change_is_exported(
    cluster: Cluster,
) -> None:
    pages = ChangingPages()
    _shop(pages)
    with run_in_thread() as web:
        web.add_route(PREFIX, pages.handle)
        master = _start(cluster, web, {"fields": FIELDS, "revisit": {"every": "1s"}})
        started = time.time()
        # Every page fetched once, then again at about 1 s intervals, as 304s.
        assert wait_until(lambda: min(_fetches(web)[p] for p in [PREFIX, *PAGES]) >= 4, 40)
        assert pages.not_modified >= 6
        pages.set(PAGES[0], "Kettle", 259)
        assert wait_until(lambda: len(_versions(cluster)) == 4, 20), _versions(cluster)
        assert wait_until(lambda: min(_fetches(web)[p] for p in PAGES) >= 7, 30)
        elapsed = time.time() - started
        counts = _fetches(web)
        status = cli(cluster, "status")
        url, token = api(cluster)
        _, text = request(url, "/metrics", token)
        _stop(cluster, master)
        site = _site(web)
    # The master never calls a revisiting crawl complete, and says what is due.
    assert status["complete"] is False and status["revisit_checks"] >= 15
    # Every check a 304 but the one that saw the new price.
    assert status["revisit_changes"] == 1
    assert status["revisit_not_modified"] == status["revisit_checks"] - 1
    assert status["revisit_overdue"] == 0 and status["revisit_due"] <= 3
    metrics = {f.name: f for f in text_string_to_metric_families(text.decode())}
    assert metrics["nadird_revisit_checks"].samples[0].value >= 15
    assert metrics["nadird_revisit_checks_per_second"].samples[0].value > 0
    assert "nadird_revisit_overdue" in metrics
    # Not more often than the interval allows (a burst would show here).
    for path in [PREFIX, *PAGES]:
        assert counts[path] <= elapsed / 1.0 + 2, (path, counts[path], elapsed)
    # The 304s did not overwrite the stored pages: fields and status stay.
    records = {r.url: r for r in cluster.records()}
    assert records[site + PAGES[1]].data == {"title": "Toaster", "price": "45"}
    assert records[site + PAGES[1]].status == 200
    assert records[site + PAGES[0]].data == {"title": "Kettle", "price": "259"}
    changes = _export_changes(cluster)
    assert [c["url"] for c in changes] == [site + PAGES[0]]
    assert changes[0]["changes"] == {"price": {"old": "299", "new": "259"}}
    assert changes[0]["time"] > changes[0]["previous_time"]
    assert _export_changes(cluster, "--since", "1h", "--job", "other") == []


def test_noise_outside_the_fields_is_no_change(cluster: Cluster) -> None:
    pages = ChangingPages(noise=True, validators=False)  # every answer a new 200 body
    _shop(pages)
    with run_in_thread() as web:
        web.add_route(PREFIX, pages.handle)
        master = _start(cluster, web, {"fields": FIELDS, "revisit": {"every": "1s"}})
        assert wait_until(lambda: min(_fetches(web)[p] for p in PAGES) >= 4, 40)
        versions = _versions(cluster)
        pages.set(PAGES[1], "Toaster", 40)
        assert wait_until(lambda: len(_versions(cluster)) == 4, 20), _versions(cluster)
        _stop(cluster, master)
        site = _site(web)
    assert sorted(url for url, _ in versions) == sorted(site + p for p in [PREFIX, *PAGES])
    changes = _export_changes(cluster)
    assert [(c["url"], c["changes"]) for c in changes] == [
        (site + PAGES[1], {"price": {"old": "45", "new": "40"}})
    ]


def test_text_signature_ignores_the_selectors_the_job_lists(cluster: Cluster) -> None:
    pages = ChangingPages(noise=True, validators=False)
    _shop(pages)
    with run_in_thread() as web:
        web.add_route(PREFIX, pages.handle)
        job = {"revisit": {"every": "1s"}, "signature_ignore": [".clock"]}
        master = _start(cluster, web, job)
        assert wait_until(lambda: min(_fetches(web)[p] for p in PAGES) >= 4, 40)
        assert len(_versions(cluster)) == 3  # one per page: the clock is ignored
        pages.set(PAGES[0], "Kettle", 249)
        assert wait_until(lambda: len(_versions(cluster)) == 4, 20)
        _stop(cluster, master)


def _schedule_problems(cluster: Cluster) -> list[tuple[str, str]]:
    """Known URLs whose revisit the frontier file would lose (not queued
    and never due, or flagged queued without a queue row) or run twice
    (a queue row and due again, or two queue rows)."""
    with sqlite3.connect(cluster.workdir / "state" / "frontier.db") as db:
        rows = db.execute(
            "SELECT r.url, r.queued, r.next_due, "
            "(SELECT count(*) FROM queue q WHERE q.fp = r.fp) FROM revisits r"
        ).fetchall()
    problems = []
    for url, queued, due, queue_rows in rows:
        if queue_rows > 1:
            problems.append((url, f"{queue_rows} queue rows"))
        elif queued and not queue_rows:
            problems.append((url, "flagged queued, no queue row: never due again"))
        elif not queued and queue_rows:
            problems.append((url, "a queue row and due again: fetched twice"))
        elif not queued and due is None:
            problems.append((url, "no due time"))
    return problems


def _fetch_gaps(fetches: list[tuple[str, float]]) -> list[float]:
    """Seconds between one fetch of a path and the next of the same path."""
    last: dict[str, float] = {}
    gaps = []
    for path, at in fetches:
        if path in last:
            gaps.append(at - last[path])
        last[path] = at
    return gaps


def test_master_killed_during_revisits_loses_none_and_doubles_no_version(
    cluster: Cluster,
) -> None:
    pages = ChangingPages()
    _shop(pages)
    with run_in_thread() as web:
        web.add_route(PREFIX, pages.handle)
        master = _start(cluster, web, {"fields": FIELDS, "revisit": {"every": "1s"}})
        config_path = cluster.workdir / "master.yaml"
        price = 299
        for _ in range(3):
            before = _fetches(web)
            assert wait_until(lambda b=before: all(_fetches(web)[p] > b[p] + 1 for p in PAGES), 40)
            price -= 10
            pages.set(PAGES[0], "Kettle", price)
            time.sleep(0.3)  # let the change be fetched (or be in flight) at the kill
            master.kill(signal.SIGKILL)
            master.popen.wait(10)
            # What the restarted master will read: no revisit lost, none queued twice.
            assert _schedule_problems(cluster) == []
            master = cluster.start_again("master", config_path)
        before = _fetches(web)
        # Every known URL is still revisited after the last restart.
        assert wait_until(
            lambda: all(_fetches(web)[p] > before[p] + 1 for p in [PREFIX, *PAGES]), 40
        )
        _stop(cluster, master)
        site = _site(web)
        fetch_times = [(e.path, e.t_start) for e in web.entries() if e.path.startswith(PREFIX)]
    history = _versions(cluster)
    versions = Counter(url for url, _ in history)
    assert versions[site + PAGES[0]] == 4  # 299 and three new prices, each once
    assert versions[site + PAGES[1]] == 1 and versions[site + PREFIX] == 1
    # No version twice: each differs from the one before it.
    assert all(a != b for a, b in itertools.pairwise(history)), history
    # No revisit run twice in one slot: a URL queued twice would be fetched
    # twice in a row, well inside its 1 s interval (a fetch lost in a kill is
    # fetched again only after the killed run's leases would have expired).
    assert min(_fetch_gaps(fetch_times)) > 0.5, _fetch_gaps(fetch_times)
    with sqlite3.connect(cluster.workdir / "state" / "frontier.db") as db:
        rows = db.execute("SELECT url, queued, next_due FROM revisits").fetchall()
    assert len(rows) == 3 and all(due is not None for _, _, due in rows)


def test_crawl_command_revisits_every_page_for_a_while(tmp_path: Path) -> None:
    pages = ChangingPages(validators=False)
    _shop(pages)
    with run_in_thread() as web:
        web.add_route(PREFIX, pages.handle)
        started = time.monotonic()
        proc = forkserver.run(
            [
                sys.executable,
                "-m",
                "nadird",
                "crawl",
                _site(web) + PREFIX,
                "--resolve",
                "*.test=127.0.0.1",
                "--allow-private",
                "--delay",
                "0",
                "--workers",
                "1",
                "--store",
                f"sqlite:///{tmp_path / 'crawl.db'}",
                "--revisit",
                "1s",
                "--for",
                "8s",
            ],
            cwd=tmp_path,
            timeout=120,
        )
        took = time.monotonic() - started
        counts = _fetches(web)
        times = {p: [e.t_start for e in web.entries() if e.path == p] for p in counts}
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["event"] == "crawl_summary" and summary["timed_out"] is True
    assert summary["complete"] is False and summary["pages"] == 3
    assert took < 60
    # Each page every second, from its first fetch on (the master and worker
    # start-up before it takes seconds on a loaded machine): a scan only on
    # the master's 1 s tick made it every 2 s.
    for path in [PREFIX, *PAGES]:
        assert 4 <= counts[path] <= 10, (path, counts)
        gaps = [b - a for a, b in itertools.pairwise(times[path])]
        assert min(gaps) >= 0.95 and statistics.median(gaps) <= 1.5, (path, gaps)
    assert summary["revisits"]["checks"] >= 6


def test_on_the_living_web_every_version_served_is_one_version_stored(cluster: Cluster) -> None:
    """Poisson-changing pages with noise on every answer (an ad, a generated
    date, a session link) and validators right, wrong or missing: the text
    signature without the noise stores exactly the versions the server served,
    whatever its validators say."""
    with run_in_thread() as web:
        living = LivingWeb(
            pages=10,
            seed=3,
            clock=ScaledClock(60),
            pages_per_host=10,
            rates=(1 / 60, 1 / 600),
            noise_share=1.0,
        ).install(web)
        job = {
            "revisit": {"every": "1s"},
            "signature_ignore": [".ad", "footer"],
            "links": {"scope": "same-domain", "deny": ["/cart"]},
        }
        config = cluster.master_config(
            jobs={"shop": job}, seeds=[{"url": u, "job": "shop"} for u in living.seeds()]
        )
        master = cluster.start("master", "master", config)
        worker = cluster.start("worker", "w1", cluster.worker_config(1))
        assert wait_until(lambda: len(living.entries()) >= 60, 60)
        worker.kill(signal.SIGTERM)  # its results in flight are sent, then it leaves
        cluster.wait(worker, 30)
        time.sleep(1.0)  # the store writer flushes every 0.1 s
        _stop(cluster, master)
        entries = living.entries()
        urls = {page.index: living.url(page) for page in living.pages}
    served: dict[str, int] = Counter()
    last: dict[int, int] = {}
    for entry in entries:
        if last.get(entry.page) != entry.version:
            served[urls[entry.page]] += 1
        last[entry.page] = entry.version
    stored = Counter(url for url, _ in _versions(cluster))
    homes = {url: stored.pop(url) for url in list(stored) if url.endswith(f".test:{web.port}/")}
    assert list(homes.values()) == [1]  # the home page never changes
    assert sum(served.values()) > len(served)  # pages did change while crawled
    assert stored == served
