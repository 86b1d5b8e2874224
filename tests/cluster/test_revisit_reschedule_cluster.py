"""A changed revisit policy takes effect at once, end to end: real master
and worker processes, a SIGHUP or a restart with another config file, and
the synthetic web's access log as the judge."""

from __future__ import annotations

import signal
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.changing import PREFIX, ChangingPages

from nadird.testing.cluster import Cluster, Proc, wait_until
from nadird.testing.web import SyntheticWeb, run_in_thread

pytestmark = pytest.mark.slow

PAGES = [PREFIX, f"{PREFIX}a", f"{PREFIX}b"]


def _shop() -> ChangingPages:
    pages = ChangingPages()
    pages.set(PREFIX, "index", 0, links=PAGES[1:])
    pages.set(PAGES[1], "Kettle", 299)
    pages.set(PAGES[2], "Toaster", 45)
    return pages


def _config(cluster: Cluster, web: SyntheticWeb, every: str) -> dict[str, Any]:
    job = {"links": {"scope": "same-domain"}, "revisit": {"every": every}}
    seed = {"url": f"http://shop.test:{web.port}{PREFIX}", "job": "shop"}
    return cluster.master_config(jobs={"shop": job}, seeds=[seed])


def _fetch_times(web: SyntheticWeb) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {path: [] for path in PAGES}
    for entry in web.entries():
        if entry.path in times:
            times[entry.path].append(entry.t_start)
    return times


def _fetched_once(web: SyntheticWeb) -> None:
    """Every page fetched, then none again for a while (the hour's policy)."""
    assert wait_until(lambda: all(_fetch_times(web).values()), 30)
    time.sleep(2.0)  # what a wrong schedule would fetch again in
    assert all(len(times) == 1 for times in _fetch_times(web).values()), _fetch_times(web)


def _logged(master: Proc, event: str) -> list[dict[str, Any]]:
    return [e for e in master.logs() if e.get("event") == event]


def _fetched_again_soon(web: SyntheticWeb, since: float) -> None:
    """Every page fetched again within a few seconds of `since` (the new
    2 s policy, from fetches already over 2 s old: due at once)."""
    assert wait_until(lambda: all(len(t) >= 2 for t in _fetch_times(web).values()), 15)
    times = _fetch_times(web)
    assert all(since <= t[1] <= since + 8 for t in times.values()), (since, times)


def test_sighup_with_a_shorter_interval_revisits_at_once(cluster: Cluster) -> None:
    with run_in_thread() as web:
        web.add_route(PREFIX, _shop().handle)
        master = cluster.start("master", "master", _config(cluster, web, "1h"))
        cluster.start("worker", "w1", cluster.worker_config(1))
        _fetched_once(web)
        path = cluster.workdir / "master.yaml"
        path.write_text(yaml.safe_dump(_config(cluster, web, "2s")), encoding="utf-8")
        sent = time.time()
        master.kill(signal.SIGHUP)
        assert wait_until(lambda: _logged(master, "revisit_rescheduled"), 15)
        _fetched_again_soon(web, sent)
        # And the new interval holds from then on.
        assert wait_until(lambda: all(len(t) >= 3 for t in _fetch_times(web).values()), 15)
        master.kill(signal.SIGTERM)
        cluster.wait(master, 30)
    [line] = _logged(master, "revisit_rescheduled")
    assert line["job"] == "shop" and line["rows"] == len(PAGES) and line["seconds"] < 5


def test_a_restart_with_a_shorter_interval_revisits_at_once(cluster: Cluster) -> None:
    with run_in_thread() as web:
        web.add_route(PREFIX, _shop().handle)
        master = cluster.start("master", "master", _config(cluster, web, "1h"))
        cluster.start("worker", "w1", cluster.worker_config(1))
        _fetched_once(web)
        master.kill(signal.SIGTERM)
        assert cluster.wait(master, 30) == 0
        path: Path = cluster.workdir / "master.yaml"
        path.write_text(yaml.safe_dump(_config(cluster, web, "2s")), encoding="utf-8")
        again = cluster.start_again("master", path)
        worker = cluster.proc("w1")
        if worker.popen.poll() is not None:  # it left with the master
            cluster.start("worker", "w1", cluster.worker_config(1))
        # Counted from the new run's start, not from the spawn, which a busy
        # machine stretched by seconds (8.3 s from the spawn in a loaded run).
        assert wait_until(lambda: len(_logged(again, "master_started")) == 2, 30)
        started = _logged(again, "master_started")[1]["ts"]
        _fetched_again_soon(web, datetime.fromisoformat(started).timestamp())
        again.kill(signal.SIGTERM)
        cluster.wait(again, 30)
    assert [e["rows"] for e in _logged(again, "revisit_rescheduled")] == [len(PAGES)]
