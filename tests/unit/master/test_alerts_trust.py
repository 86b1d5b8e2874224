"""What an operator must be able to trust in an alert, pure: a worker is
reported back only when it is heard from again, a crawl is reported finished
only when this run did work, measures are rounded, a rule without a
threshold shows none, and a resolved notice says what is over."""

from __future__ import annotations

from typing import Any

from nadird.config.alerts import RuleConfig
from nadird.master.alerts.engine import AlertEngine, Event
from nadird.master.alerts.messages import payload, text
from nadird.master.alerts.rules import Snapshot, WorkerSeen
from nadird.master.revisits.changes import FieldChange


def rule(type_: str, **kw: Any) -> RuleConfig:
    return RuleConfig(type=type_, channels=["hook"], **kw)  # type: ignore[arg-type]


def snap(now: float, **kw: Any) -> Snapshot:
    base: dict[str, Any] = {"queued": 10, "stored": 0, "complete": False, "dead_letters": 0}
    return Snapshot(now=now, **{**base, **kw})


def run(engine: AlertEngine, snaps: list[Snapshot]) -> list[Event]:
    return [e for s in snaps for e in engine.evaluate(s)]


def test_a_killed_worker_marked_offline_stays_gone_until_it_registers_again() -> None:
    engine = AlertEngine([rule("worker_gone", after=5, repeat="1h")])
    back = WorkerSeen("w1", 0.2, None)
    events = run(
        engine,
        [
            snap(0, workers=(back,)),
            snap(5, workers=(WorkerSeen("w1", 5.0, None),)),  # killed at 0: silent 5 s
            snap(10, workers=(WorkerSeen("w1", 10.0, 0.0),)),  # the master marks it offline
            snap(11, workers=(WorkerSeen("w1", 11.0, 1.0),)),
            snap(20, workers=()),  # dropped from the master's list of gone workers
            snap(30, workers=(back,)),  # registered again
        ],
    )
    assert [(e.at, e.state) for e in events] == [(5, "firing"), (30, "resolved")]
    assert events[1].value == 20.0  # silent for that long when last seen gone
    assert text(events[1], "en") == (
        "[RESOLVED] nadird: worker w1 is back (it was silent or gone for 20s), job (all jobs)"
    )
    assert "工作节点 w1 已恢复" in text(events[1], "zh")


def test_a_silent_connected_worker_is_back_when_heard_from() -> None:
    engine = AlertEngine([rule("worker_gone", after=5)])
    events = run(
        engine,
        [
            snap(6, workers=(WorkerSeen("w1", 6.0, None),)),
            snap(7, workers=(WorkerSeen("w1", 0.1, None),)),
        ],
    )
    assert [(e.at, e.state) for e in events] == [(6, "firing"), (7, "resolved")]


def test_job_finished_is_said_once_per_crawl_that_did_work_in_this_run() -> None:
    engine = AlertEngine([rule("job_finished", severity="info")])
    # Started with no seeds, and a restart on a finished crawl of 328 pages: nothing done.
    assert run(engine, [snap(0, queued=0, complete=True), snap(1, complete=True)]) == []
    assert run(engine, [snap(2, complete=True, stored_total=328)]) == []
    crawl = run(
        engine,
        [
            snap(3, queued=4),
            snap(4, queued=0, complete=True, stored=3, dead_letters=1, stored_total=331),
            snap(5, queued=0, complete=True, stored=3, dead_letters=1, stored_total=331),
        ],
    )
    assert [e.at for e in crawl] == [4]
    assert text(crawl[0], "en") == (
        "[INFO] nadird: crawl finished: 3 pages stored in this run (331 in the store), "
        "job (all jobs)"
    )
    body = payload(crawl[0], "en", "m1")
    assert body["value"] == 3 and "threshold" not in body
    # New seeds crawled to the end: a new notice.
    more = run(engine, [snap(6, queued=2, stored=3), snap(7, complete=True, stored=5)])
    assert [e.at for e in more] == [7]


def test_a_job_finished_rule_added_by_a_reload_does_not_announce_the_past() -> None:
    engine = AlertEngine([rule("stall")])
    run(engine, [snap(0, queued=0, complete=True, stored=7)])
    engine.reload([rule("stall"), rule("job_finished")])
    assert run(engine, [snap(1, queued=0, complete=True, stored=7)]) == []


def test_measures_are_rounded_and_a_rule_without_a_threshold_shows_none() -> None:
    engine = AlertEngine([rule("worker_gone", after=5)])
    [gone] = engine.evaluate(snap(9, workers=(WorkerSeen("w1", 5.498845225000082, 0.2),)))
    body = payload(gone, "en", "m1")
    assert body["value"] == 5.5 and body["threshold"] == 5
    change = RuleConfig(type="change", channels=["hook"], job="shop", fields=["title"])
    moved = FieldChange("http://shop.test/1", "shop", "title", "Kettle", "Kettle 2")
    [event] = AlertEngine([change]).evaluate(snap(0, changes=(moved,)))
    body = payload(event, "en", "m1")
    assert "value" not in body and "threshold" not in body
    assert body["details"]["new"] == "Kettle 2"


def test_resolved_notices_say_the_problem_is_over() -> None:
    engine = AlertEngine([rule("error_rate", threshold=0.01, window="1m", count=20)])
    run(engine, [snap(0, domains={"a.test": (0, 0)}), snap(10, domains={"a.test": (30, 1)})])
    [over] = engine.evaluate(snap(100, domains={"a.test": (30, 1)}))
    assert over.state == "resolved"
    assert text(over, "en") == (
        "[RESOLVED] nadird: domain a.test: error rate back under 0.01 over 1m, job (all jobs)"
    )
    stall = AlertEngine([rule("stall", after=60)])
    [resolved] = run(stall, [snap(0), snap(60), snap(70, stored=1)])[1:]
    assert text(resolved, "en").startswith("[RESOLVED] nadird: pages are stored again")


def test_the_console_shows_a_rate_as_measured() -> None:
    from nadird.master.console.format import measure

    assert (measure(0.033), measure(0.01), measure(12), measure(None)) == (
        "0.033",
        "0.01",
        "12",
        "—",
    )
    assert measure(5.498845225000082) == "5.499" and measure(123456.7) == "123,456.7"
