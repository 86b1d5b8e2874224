"""A change stored just before the master and its worker are killed
(SIGKILL) is alerted once the master is back: the alerts follow the store's
history, each version against the one before it, with none skipped."""

from __future__ import annotations

import itertools
import json
import signal
import sqlite3
from typing import Any

import pytest
from support.changing import PREFIX, ChangingPages
from support.receiver import AlertReceiver, receiver_in_thread

from nadird.testing.cluster import Cluster, Proc, wait_until
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow

PAGE = f"{PREFIX}a"
SHOP = {
    "links": {"scope": "same-domain"},
    "fields": {"price": [{"css": ".price"}]},
    "schema": {"price": {"type": "number", "process": ["number"]}},
    "revisit": {"every": "1s"},
}
ATTEMPTS = 8  # kills until one lands between the store's write and the frontier's commit


def prices(cluster: Cluster) -> list[Any]:
    """The page's stored history: its price in each version, oldest first."""
    if not cluster.store_path.exists():
        return []
    with sqlite3.connect(cluster.store_path) as db:
        try:
            rows = db.execute(
                "SELECT data FROM changes WHERE url LIKE ? ORDER BY fetched_at", (f"%{PAGE}",)
            ).fetchall()
        except sqlite3.OperationalError:  # no tables yet
            return []
    return [json.loads(data)["price"] for (data,) in rows]


def watched_price(cluster: Cluster) -> Any:
    """The price the master's revisit row holds (read while the master is down)."""
    with sqlite3.connect(cluster.workdir / "state" / "frontier.db") as db:
        row = db.execute("SELECT watched FROM revisits WHERE url LIKE ?", (f"%{PAGE}",)).fetchone()
    return json.loads(row[0])["price"]


def restart(cluster: Cluster) -> Proc:
    master = cluster.start_again("master", cluster.workdir / "master.yaml")
    cluster.start_again("w1", cluster.workdir / "w1.yaml", role="worker")
    return master


def alerted(receiver: AlertReceiver) -> list[tuple[Any, Any]]:
    return [(p["details"]["old"], p["details"]["new"]) for p in receiver.payloads()]


def test_a_change_stored_as_the_master_is_killed_is_alerted_after_the_restart(
    cluster: Cluster,
) -> None:
    pages, receiver = ChangingPages(), AlertReceiver()
    pages.set(PREFIX, "index", 0, links=[PAGE])
    pages.set(PAGE, "Kettle", 310)
    with receiver_in_thread(receiver), run_in_thread() as web:
        web.add_route(PREFIX, pages.handle)
        hook = {"type": "webhook", "url": receiver.url(), "retry_delay": 0.05}
        rule = {"type": "change", "job": "shop", "fields": ["price"], "repeat": 0.01}
        config = cluster.master_config(
            jobs={"shop": SHOP},
            seeds=[{"url": f"http://shop.test:{web.port}{PREFIX}", "job": "shop"}],
            alerts={"channels": {"hook": hook}, "rules": [{**rule, "channels": ["hook"]}]},
            # Housekeeping commits the frontier each second: a wide enough window.
            master={"lease_ttl": 8.0},
        )
        master = cluster.start("master", "master", config)
        cluster.start("worker", "w1", cluster.worker_config(1))
        assert wait_until(lambda: prices(cluster) == [310], 30)
        for attempt in range(ATTEMPTS):
            price = 400 + attempt
            pages.set(PAGE, "Kettle", price)
            assert wait_until(lambda p=price: prices(cluster)[-1:] == [p], 30, interval=0.002)
            # Both at once: no worker is left to send its held results again.
            for proc in (master, cluster.proc("w1")):
                proc.kill(signal.SIGKILL)
                proc.popen.wait(10)
            if watched_price(cluster) != price:
                break  # the store has the fetch, the master's row does not
            master = restart(cluster)
        else:
            pytest.fail(f"no kill of {ATTEMPTS} landed before the frontier's commit")
        pages.set(PAGE, "Kettle", 494)  # the page moves on while the master is down
        master = restart(cluster)
        assert wait_until(lambda: prices(cluster)[-1:] == [494], 30)
        assert wait_until(lambda: any(new == 494 for _, new in alerted(receiver)), 30)
        master.kill(signal.SIGTERM)
        assert cluster.wait(master, 30) == 0
    history = prices(cluster)
    assert history[-2:] == [price, 494]
    assert alerted(receiver) == list(itertools.pairwise(history))
    [caught] = [e for e in master.logs() if e.get("event") == "watched_values_caught_up"]
    assert caught["changes"] == 1
