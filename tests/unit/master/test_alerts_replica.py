"""The replica_lag rule: the replica of the master's state too far behind."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from nadird.common.errors import ConfigError
from nadird.config import config_from_dict
from nadird.config.alerts import RuleConfig
from nadird.master.alerts.engine import AlertEngine
from nadird.master.alerts.messages import payload, text
from nadird.master.alerts.rules import Snapshot


def snap(now: float, lag: float | None) -> Snapshot:
    return Snapshot(now=now, queued=5, stored=0, complete=False, dead_letters=0, replica_lag=lag)


def test_it_fires_past_its_threshold_once_and_resolves_when_the_replica_catches_up() -> None:
    engine = AlertEngine([RuleConfig(type="replica_lag", channels=["hook"], after="2m")])
    lags = [0.5, 30.0, 119.0, 150.0, 400.0, 1.0]
    seen = [
        (e.state, e.subject) for i, lag in enumerate(lags) for e in engine.evaluate(snap(i, lag))
    ]
    assert seen == [("firing", "replica"), ("resolved", "replica")]


def test_without_a_replica_it_says_nothing_and_a_minute_is_its_default() -> None:
    rule = RuleConfig(type="replica_lag", channels=["hook"])
    assert rule.after_s == 60.0
    assert AlertEngine([rule]).evaluate(snap(0, None)) == []


def test_its_text_says_how_far_behind_and_what_is_at_stake() -> None:
    engine = AlertEngine([RuleConfig(type="replica_lag", channels=["hook"], after=60)])
    [event] = engine.evaluate(snap(0, 754.3))
    en, zh = text(event, "en"), text(event, "zh")
    assert "replica of the master's state is 12m34s behind (threshold 1m)" in en
    assert "副本落后 12m34s" in zh and "阈值 1m" in zh
    body = payload(event, "en", "m1")
    assert body["rule"] == "replica_lag" and body["value"] == 754.3 and body["threshold"] == 60


def config(master: dict[str, Any]) -> dict[str, Any]:
    return {
        "master": master,
        "alerts": {
            "channels": {"hook": {"type": "webhook", "url": "http://127.0.0.1:9/hook"}},
            "rules": [{"type": "replica_lag", "channels": ["hook"], "after": "5m"}],
        },
    }


def test_a_rule_on_a_replica_that_is_not_configured_is_refused_naming_it() -> None:
    with pytest.raises(ConfigError) as caught:
        config_from_dict(config({}), "m.yaml")
    assert caught.value.key == "alerts.rules[0].type" and "master.replica" in caught.value.expected
    loaded = config_from_dict(config({"replica": "file:///mnt/replica/nadird"}), "m.yaml")
    assert loaded.alerts.rules[0].after_s == 300.0


def test_replica_superseded_says_once_why_the_master_stops_and_needs_a_replica() -> None:
    engine = AlertEngine([RuleConfig(type="replica_superseded", channels=["hook"])])
    calm = snap(0, 0.1)
    why = "the replica file:///r holds generation 5, started on host-b at ..."
    stopping = dataclasses.replace(calm, now=1.0, superseded=why)
    seen = [e for s in (calm, stopping, stopping) for e in engine.evaluate(s)]
    assert [(e.state, e.subject) for e in seen] == [("firing", "replica")]
    assert text(seen[0], "en") == f"[WARNING] nadird: this master stops: {why}"
    assert "另一个主节点已接管" in text(seen[0], "zh")
    assert payload(seen[0], "en", "m1")["details"] == {"reason": why}
    with pytest.raises(ConfigError) as caught:
        config_from_dict(
            {
                **config({}),
                "alerts": {
                    **config({})["alerts"],
                    "rules": [{"type": "replica_superseded", "channels": ["hook"]}],
                },
            },
            "m.yaml",
        )
    assert "replica_superseded with master.replica" in caught.value.expected
