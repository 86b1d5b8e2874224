"""Change alerts, job-scoped rules and alerts reloaded on SIGHUP, from a real
master PROCESS and worker to real receivers on loopback (one a DingTalk robot
that checks signatures), over pages whose prices change while they are
revisited every second (testing/changing.py)."""

from __future__ import annotations

import html
import json
import signal
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.changing import PREFIX, ChangingPages
from support.hostile_helpers import hostile_web
from support.receiver import AlertReceiver, receiver_in_thread

from nadird.testing.cluster import Cluster, Proc, wait_until
from nadird.testing.web import SyntheticWeb, run_in_thread

pytestmark = pytest.mark.slow

PAGES = [f"{PREFIX}a", f"{PREFIX}b"]
SHOP = {
    "links": {"scope": "same-domain"},
    "fields": {"title": [{"css": ".title"}], "price": [{"css": ".price"}]},
    "schema": {"price": {"type": "number", "process": ["number"]}},
    "revisit": {"every": "1s"},
}
SIGN_KEY = "SECtest-signing-key"


def hook(receiver: AlertReceiver, **kw: Any) -> dict[str, Any]:
    return {"type": "webhook", "url": receiver.url(), "retry_delay": 0.05, **kw}


def change(when: dict[str, float] | None, channels: list[str]) -> dict[str, Any]:
    rule: dict[str, Any] = {"type": "change", "job": "shop", "fields": ["price"]}
    return {**rule, "channels": channels, **({"when": when} if when else {})}


def shop_pages() -> ChangingPages:
    pages = ChangingPages()
    pages.set(PREFIX, "index", 0, links=PAGES)
    pages.set(PAGES[0], "Kettle", 299)
    pages.set(PAGES[1], "Toaster", 300)
    return pages


def start(cluster: Cluster, web: SyntheticWeb, alerts: dict[str, Any]) -> tuple[Proc, Path]:
    seed = {"url": f"http://shop.test:{web.port}{PREFIX}", "job": "shop"}
    config = cluster.master_config(jobs={"shop": SHOP}, seeds=[seed], alerts=alerts)
    master = cluster.start("master", "master", config)
    cluster.start("worker", "w1", cluster.worker_config(1))
    return master, cluster.workdir / "master.yaml"


def versions(cluster: Cluster, path: str) -> list[str]:
    """The stored history of one page (its extracted data, oldest first)."""
    if not cluster.store_path.exists():
        return []
    with sqlite3.connect(cluster.store_path) as db:
        try:
            rows = db.execute(
                "SELECT data FROM changes WHERE url LIKE ? ORDER BY fetched_at", (f"%{path}",)
            ).fetchall()
        except sqlite3.OperationalError:  # the store has not made its tables yet
            return []
    return [data for (data,) in rows]


def changes_seen(receiver: AlertReceiver) -> list[tuple[str, Any, Any]]:
    return [
        (p["subject"].rsplit("/", 1)[1], p["details"]["old"], p["details"]["new"])
        for p in receiver.payloads()
        if p["rule"] == "change"
    ]


def stop(cluster: Cluster, master: Proc) -> None:
    master.kill(signal.SIGTERM)
    assert cluster.wait(master, 30) == 0


def test_a_price_drop_below_the_limit_raises_one_alert_and_other_changes_none(
    cluster: Cluster, tmp_path: Path
) -> None:
    sign = tmp_path / "dingtalk.sign"
    sign.write_text(SIGN_KEY)
    pages = shop_pages()
    hook_rx, robot_rx = AlertReceiver(), AlertReceiver(dingtalk_secret=SIGN_KEY)
    with receiver_in_thread(hook_rx), receiver_in_thread(robot_rx), run_in_thread() as web:
        web.add_route(PREFIX, pages.handle)
        robot = {
            "type": "dingtalk",
            "url": robot_rx.url("/robot/send?access_token=t"),
            "sign_file": str(sign),
            "language": "zh",
            "retry_delay": 0.05,
        }
        alerts = {
            "channels": {"hook": hook(hook_rx), "robot": robot},
            "rules": [change({"below": 260}, ["hook", "robot"])],
        }
        master, _ = start(cluster, web, alerts)
        assert wait_until(lambda: all(len(versions(cluster, p)) == 1 for p in PAGES), 30)
        pages.set(PAGES[0], "Kettle", 259)  # below 260: fires
        pages.set(PAGES[1], "Toaster", 310)  # a change, but not below 260: none
        assert wait_until(lambda: len(hook_rx.received) == 1 and len(robot_rx.received) == 1, 30)
        pages.set(PAGES[0], "Kettle", 249)  # below again, within `repeat`: held back
        assert wait_until(lambda: len(versions(cluster, PAGES[0])) == 3, 30)
        assert wait_until(lambda: len(versions(cluster, PAGES[1])) == 2, 30)
        stop(cluster, master)
    assert changes_seen(hook_rx) == [("a", 299.0, 259.0)]
    [sent] = hook_rx.payloads()
    url = f"http://shop.test:{web.port}{PAGES[0]}"
    assert sent["subject"] == url and sent["job"] == "shop" and sent["state"] == "firing"
    assert f"price of {url} went from 299 to 259 (below 260), job shop" in sent["text"]
    [robot_msg] = robot_rx.payloads()
    assert robot_rx.bad_signatures == 0
    assert f"{url} 的 price 从 299 变为 259（低于 260），任务 shop" in robot_msg["text"]["content"]
    assert json.loads(versions(cluster, PAGES[1])[1])["price"] == 310  # b changed, unalerted


def test_job_scoped_rules_watch_their_jobs_pages_only(cluster: Cluster) -> None:
    receiver = AlertReceiver()
    with receiver_in_thread(receiver), hostile_web() as (web, hostile):
        paths = [f"/p{i}" for i in range(4)]
        for host in ("shy.test", "calm.test"):
            hostile.add_host(host, robots="")
            hostile.add_html(host, "/", paths)
            for path in paths:
                hostile.add_html(host, path)
        # shy.test refuses the shop job 5 times in a row; calm.test never refuses.
        hostile.throttle("shy.test", 429, "0", after=2, times=5)
        rules = [
            {"type": "blocked", "count": 3, "channels": ["hook"]},
            {"type": "blocked", "count": 3, "channels": ["hook"], "job": "shop"},
            {"type": "blocked", "count": 3, "channels": ["hook"], "job": "blog"},
            {"type": "stall", "after": 60, "channels": ["hook"], "job": "blog"},
        ]
        config = cluster.master_config(
            jobs={"shop": {"max_retries": 8}, "blog": {"max_retries": 8}},
            seeds=[
                {"url": f"http://shy.test:{web.port}/", "job": "shop"},
                {"url": f"http://calm.test:{web.port}/", "job": "blog"},
            ],
            master={"bag_size": 5, "retry_base_delay": 0.05, "retry_max_delay": 0.1},
            alerts={"channels": {"hook": hook(receiver)}, "rules": rules},
        )
        master = cluster.start("master", "master", config)
        fetch = {"throttle": {"backoff_base": 0.1, "max_delay": 0.5}}
        cluster.start("worker", "w1", cluster.worker_config(1, **fetch))
        assert cluster.wait(master, 60) == 0
        statuses = [e.status for e in web.entries() if e.host.startswith("shy.test")]
    assert statuses.count(429) == 5
    payloads = receiver.payloads()
    firing = [(p["rule_index"], p["subject"]) for p in payloads if p["state"] == "firing"]
    assert sorted(firing) == [(0, "shy.test"), (1, "shy.test")]
    assert {p["job"] for p in receiver.payloads() if p["rule_index"] == 1} == {"shop"}
    assert len(cluster.records()) == 2 * (len(paths) + 1)


def reload(master: Proc, path: Path, alerts: dict[str, Any], event: str) -> None:
    config = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**config, "alerts": alerts}))
    before = sum(e.get("event") == event for e in master.logs())
    master.kill(signal.SIGHUP)
    assert wait_until(lambda: sum(e.get("event") == event for e in master.logs()) > before, 15)


def test_sighup_reloads_rules_and_channels_and_keeps_them_when_the_new_ones_are_wrong(
    cluster: Cluster,
) -> None:
    pages = shop_pages()
    one, two = AlertReceiver(), AlertReceiver()
    with receiver_in_thread(one), receiver_in_thread(two), run_in_thread() as web:
        web.add_route(PREFIX, pages.handle)
        first = {"channels": {"one": hook(one)}, "rules": [change(None, ["one"])]}
        master, path = start(cluster, web, first)
        assert wait_until(lambda: all(len(versions(cluster, p)) == 1 for p in PAGES), 30)
        pages.set(PAGES[0], "Kettle", 259)
        assert wait_until(lambda: changes_seen(one) == [("a", 299.0, 259.0)], 30)
        # A channel and a rule added; the first rule stays, with its repeat clock.
        second = {
            "channels": {"one": hook(one), "two": hook(two)},
            "rules": [change(None, ["one"]), change({"below": 200}, ["two"])],
        }
        reload(master, path, second, "alerts_reloaded")
        pages.set(PAGES[0], "Kettle", 150)
        assert wait_until(lambda: changes_seen(two) == [("a", 259.0, 150.0)], 30)
        # Wrong alerts: a channel whose secret is missing, then an unknown channel.
        missing = {"type": "webhook", "url": two.url(), "secret_env": "NADIRD_TEST_UNSET_TOKEN"}
        third = {**second, "channels": {**second["channels"], "three": missing}}
        reload(master, path, third, "alerts_reload_rejected")
        reload(master, path, {**second, "rules": [change(None, ["four"])]}, "reload_rejected")
        pages.set(PAGES[1], "Toaster", 100)  # the running rules still fire, both
        assert wait_until(lambda: ("b", 300.0, 100.0) in changes_seen(two), 30)
        assert wait_until(lambda: ("b", 300.0, 100.0) in changes_seen(one), 30)
        assert master.popen.poll() is None
        stop(cluster, master)
    # The first rule held the second drop of a back (repeat), across the reload.
    assert changes_seen(one) == [("a", 299.0, 259.0), ("b", 300.0, 100.0)]
    assert changes_seen(two) == [("a", 259.0, 150.0), ("b", 300.0, 100.0)]
    [reloaded] = [e for e in master.logs() if e.get("event") == "alerts_reloaded"]
    assert reloaded["channels_started"] == ["two"] and reloaded["rules_kept"] == 1


HOSTILE = "@all <!channel> [Verify login](http://evil.test/) <img src=x onerror=y> \u202eevil"


def test_a_hostile_value_on_a_page_reaches_the_receiver_defused(cluster: Cluster) -> None:
    pages, receiver = shop_pages(), AlertReceiver()
    with receiver_in_thread(receiver), run_in_thread() as web:
        web.add_route(PREFIX, pages.handle)
        rule = {"type": "change", "job": "shop", "fields": ["title"], "channels": ["hook"]}
        master, _ = start(cluster, web, {"channels": {"hook": hook(receiver)}, "rules": [rule]})
        assert wait_until(lambda: all(len(versions(cluster, p)) == 1 for p in PAGES), 30)
        pages.set(PAGES[0], html.escape(HOSTILE), 299)  # the page shows the text as it is
        assert wait_until(lambda: len(receiver.received) == 1, 30)
        stop(cluster, master)
    [sent] = receiver.payloads()
    assert sent["details"]["new"] == HOSTILE  # the data field: as found
    shown = sent["text"]
    assert "title of http://shop.test" in shown and "went from Kettle to" in shown
    for live in ("@all", "<!channel>", "\u202e"):
        assert live not in shown
    assert "\uff20all \u2039!channel> [Verify login]" in shown and "\\u202eevil" in shown
