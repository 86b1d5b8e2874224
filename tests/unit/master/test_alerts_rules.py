"""Alert rules and the engine, pure: snapshots with a made-up clock in,
events out. No server, no sleeping."""

from __future__ import annotations

from typing import Any

import pytest
from support import REPO

from nadird.common.errors import ConfigError
from nadird.config import config_from_dict
from nadird.config.alerts import RuleConfig
from nadird.master.alerts.engine import AlertEngine, Event
from nadird.master.alerts.messages import payload, text
from nadird.master.alerts.rules import Snapshot, WorkerSeen
from nadird.master.results.blocking import BlockStreaks
from nadird.protocol.messages import PageResult


def rule(type_: str, **kw: Any) -> RuleConfig:
    return RuleConfig(type=type_, channels=["hook"], **kw)  # type: ignore[arg-type]


def snap(now: float, **kw: Any) -> Snapshot:
    base: dict[str, Any] = {"queued": 10, "stored": 0, "complete": False, "dead_letters": 0}
    return Snapshot(now=now, **{**base, **kw})


def states(events: list[Event]) -> list[tuple[str, str, int]]:
    return [(e.state, e.subject, e.repeat) for e in events]


def run(engine: AlertEngine, snaps: list[Snapshot]) -> list[tuple[float, str, str, int]]:
    return [(s.now, e.state, e.subject, e.repeat) for s in snaps for e in engine.evaluate(s)]


def test_stall_fires_once_is_repeated_after_repeat_and_resolves_when_a_page_is_stored() -> None:
    engine = AlertEngine([rule("stall", after="5m", repeat="30m")])
    seen = run(engine, [snap(t) for t in range(0, 2200, 60)] + [snap(2200, stored=1)])
    assert seen == [
        (300, "firing", "crawl", 0),  # 5 minutes without a stored page
        (2100, "firing", "crawl", 1),  # 30 minutes later, not before
        (2200, "resolved", "crawl", 0),
    ]


def test_stall_needs_queued_work() -> None:
    engine = AlertEngine([rule("stall", minutes=1)])
    assert run(engine, [snap(t, queued=0) for t in range(0, 600, 30)]) == []


def test_blocked_counts_in_a_row_per_domain_and_resolves_when_it_answers() -> None:
    engine = AlertEngine([rule("blocked", count=3)])
    events = run(
        engine,
        [
            snap(0, blocked={"a.test": 2}),
            snap(1, blocked={"a.test": 3, "b.test": 1}),
            snap(2, blocked={"a.test": 9}),  # still blocked: suppressed
            snap(3, blocked={}),
        ],
    )
    assert events == [(1, "firing", "a.test", 0), (3, "resolved", "a.test", 0)]


def page(url: str, status: int) -> PageResult:
    return PageResult(url=url, fp=bytes(16), status=status, final_url=url, fetched_at=0.0, depth=0)


def test_block_streaks_end_with_any_other_answer() -> None:
    streaks = BlockStreaks()
    pages = [page(f"http://a.test/{i}", s) for i, s in enumerate([403, 429, 503, 429])]
    streaks.pages("a.test", pages)
    streaks.hit("a.test")  # a URL handed back throttled
    assert streaks.streaks == {"a.test": 5}
    streaks.pages("a.test", [page("http://a.test/ok", 200)])
    assert streaks.streaks == {}


def test_worker_gone_fires_per_worker_and_resolves_when_it_is_back() -> None:
    engine = AlertEngine([rule("worker_gone", after=2)])
    w1_ok, w2_ok = WorkerSeen("w1", 0.1, None), WorkerSeen("w2", 0.1, None)
    events = run(
        engine,
        [
            snap(0, workers=(w1_ok, w2_ok)),
            snap(1, workers=(w1_ok, WorkerSeen("w2", 1.0, 0.5))),
            snap(3, workers=(w1_ok, WorkerSeen("w2", 3.0, 2.5))),
            snap(4, workers=(w1_ok, w2_ok)),
        ],
    )
    assert events == [(3, "firing", "w2", 0), (4, "resolved", "w2", 0)]


def test_error_rate_over_the_window_needs_enough_pages() -> None:
    engine = AlertEngine([rule("error_rate", threshold=0.5, window="1m", count=10)])
    events = run(
        engine,
        [
            snap(0, domains={"a.test": (100, 0)}),
            snap(30, domains={"a.test": (104, 4)}),  # 4 of 4 failed, too few pages
            snap(59, domains={"a.test": (112, 10)}),  # 10 of 12
            snap(200, domains={"a.test": (200, 12)}),  # the window moved on
        ],
    )
    assert events == [(59, "firing", "a.test", 0), (200, "resolved", "a.test", 0)]


def test_dead_letters_growing_within_the_window() -> None:
    engine = AlertEngine([rule("dead_letters", count=3, window=60)])
    events = run(
        engine,
        [snap(0), snap(10, dead_letters=2), snap(20, dead_letters=3), snap(100, dead_letters=3)],
    )
    assert events == [(20, "firing", "crawl", 0), (100, "resolved", "crawl", 0)]


def test_job_finished_once_and_no_resolved_notice() -> None:
    engine = AlertEngine([rule("job_finished", repeat="1h")])
    events = run(
        engine,
        [
            snap(0),
            snap(1, complete=True, stored=7),
            snap(2, complete=True),
            snap(3, complete=False),
        ],
    )
    assert events == [(1, "firing", "crawl", 0)]


def test_messages_name_the_subject_the_number_and_the_threshold() -> None:
    engine = AlertEngine([rule("blocked", count=3, job="shop", severity="critical")])
    # A rule with `job` sees that job's counts only.
    shop = snap(0, blocked={"a.test": 4})
    [event] = engine.evaluate(snap(0, blocked={"a.test": 4, "b.test": 9}, jobs={"shop": shop}))
    en, zh = text(event, "en"), text(event, "zh")
    assert en.startswith("[CRITICAL] nadird: domain a.test answered 403/429/503 4 times")
    assert "threshold 3" in en and "job shop" in en
    assert "域名 a.test" in zh and "连续 4 次" in zh and "阈值 3" in zh and "任务 shop" in zh
    body = payload(event, "zh", "m1")
    assert body["rule"] == "blocked" and body["state"] == "firing" and body["value"] == 4
    assert body["threshold"] == 3 and body["job"] == "shop" and body["text"] == zh
    [stall] = AlertEngine([rule("stall", after=90)]).evaluate(snap(0)) or [None]  # not yet
    assert stall is None


def test_stall_text_shows_durations() -> None:
    engine = AlertEngine([rule("stall", after=90)])
    engine.evaluate(snap(0))
    [event] = engine.evaluate(snap(5400))
    assert text(event, "en") == (
        "[WARNING] nadird: no page stored for 1h30m while 10 URLs are queued "
        "(threshold 1m30s), job (all jobs)"
    )


def alerts_config(**alerts: Any) -> dict[str, Any]:
    channels = {"hook": {"type": "webhook", "url": "http://127.0.0.1:9/hook"}}
    return {
        "alerts": {
            "channels": channels,
            "rules": [{"type": "stall", "channels": ["hook"]}],
            **alerts,
        }
    }


@pytest.mark.parametrize(
    ("alerts", "key", "says"),
    [
        ({"rules": [{"type": "stal", "channels": ["hook"]}]}, "alerts.rules[0].type", "stall"),
        (
            {"rules": [{"type": "stall", "channels": ["mail"]}]},
            "alerts.rules[0].channels[0]",
            "unknown channel 'mail'",
        ),
        (
            {"rules": [{"type": "stall", "channels": ["hook"], "job": "nope"}]},
            "alerts.rules[0].job",
            "unknown job 'nope'",
        ),
        (
            {"rules": [{"type": "stall", "channels": ["hook"], "repeat": "soon"}]},
            "alerts.rules[0]",
            "repeat: expected a duration",
        ),
        (
            {"channels": {"hook": {"type": "webhook", "url": "ftp://x/"}}},
            "alerts.channels.hook",
            "http:// or https://",
        ),
        (
            {"channels": {"hook": {"type": "webhook", "url": "http://h:99999/"}}},
            "alerts.channels.hook",
            "does not parse",
        ),
        (
            {"channels": {"hook": {"type": "webhook", "url": "http://h/?t={secret}"}}},
            "alerts.channels.hook",
            "neither secret_file nor secret_env",
        ),
        (
            {"channels": {"hook": {"type": "sms", "url": "http://h/"}}},
            "alerts.channels.hook.type",
            "webhook",
        ),
    ],
)
def test_bad_alert_config_names_the_key(alerts: dict[str, Any], key: str, says: str) -> None:
    with pytest.raises(ConfigError) as info:
        config_from_dict(alerts_config(**alerts), "m.yaml")
    assert info.value.key == key
    assert says in info.value.expected


def test_a_good_alert_config_loads() -> None:
    config = config_from_dict(alerts_config(), "m.yaml")
    [stall] = config.alerts.rules
    assert stall.after_s == 300 and stall.repeat_s == 1800


def test_the_manuals_example_loads() -> None:
    import yaml

    page = (REPO / "docs" / "operations" / "alerts.md").read_text()
    block = page.split("# Alerts", 1)[1].split("```yaml", 1)[1].split("```", 1)[0]
    config = config_from_dict(yaml.safe_load(block), "docs/operations/alerts.md")
    assert [r.type for r in config.alerts.rules] == [
        "stall",
        "blocked",
        "worker_gone",
        "error_rate",
        "dead_letters",
        "job_finished",
    ]
    assert set(config.alerts.channels) == {"ops", "robot", "mail"}


def test_alert_changes_are_taken_live() -> None:
    from nadird.config.reload import needs_restart
    from nadird.master.service.role import LIVE

    assert not needs_restart("alerts.rules", LIVE)
    assert not needs_restart("alerts.channels.hook.url", LIVE)


def test_the_engine_keeps_open_alerts_and_a_bounded_ring_of_recent_events() -> None:
    from nadird.master.alerts.engine import RECENT_EVENTS

    engine = AlertEngine([rule("stall", after="1m", repeat="1m")])
    run(engine, [snap(t) for t in range(0, 200, 30)])  # fires at 60, repeats at 120 and 180
    [alert] = engine.open_alerts()
    assert (alert.subject, alert.since, alert.sent, alert.rule.type) == ("crawl", 60, 3, "stall")
    assert [(e.state, e.at) for e in engine.recent] == [
        ("firing", 60),
        ("firing", 120),
        ("firing", 180),
    ]
    run(engine, [snap(210, stored=1)])
    assert engine.open_alerts() == [] and engine.recent[-1].state == "resolved"
    run(engine, [snap(t, stored=1) for t in range(240, 60 * 60 * 10, 30)])
    assert len(engine.recent) == RECENT_EVENTS  # a stall again, repeated each minute
