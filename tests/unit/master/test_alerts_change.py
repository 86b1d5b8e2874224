"""Change alerts and job-scoped rules, pure or on a real frontier.db: the
conditions, the watched values kept in the revisit row, one alert per URL
held back by `repeat`, rules restricted to a job, and the engine's reload."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import REPO

from nadird.common.errors import ConfigError
from nadird.common.urls import fingerprint
from nadird.config import config_from_dict
from nadird.config.alerts import ChangeCondition, RuleConfig
from nadird.master.alerts.engine import AlertEngine
from nadird.master.alerts.messages import payload, text
from nadird.master.alerts.rules import Snapshot
from nadird.master.frontier.queues import Frontier
from nadird.master.results.blocking import BlockStreaks
from nadird.master.results.by_job import JobTallies
from nadird.master.revisits.changes import FieldChange, as_number, meets, watched_changes
from nadird.master.revisits.scheduler import Revisits
from nadird.master.state.frontier_db import FrontierDB
from nadird.protocol.messages import PageResult

URL = "http://shop.test/item/7"


def change_rule(when: ChangeCondition | None = None, **kw: Any) -> RuleConfig:
    return RuleConfig(
        type="change",
        channels=["hook"],
        job="shop",
        fields=["price"],
        when=when or "any",
        **kw,
    )


def snap(now: float, *changes: FieldChange, **kw: Any) -> Snapshot:
    base: dict[str, Any] = {"queued": 1, "stored": 0, "complete": False, "dead_letters": 0}
    return Snapshot(now=now, changes=changes, **{**base, **kw})


def price(old: Any, new: Any, url: str = URL, job: str = "shop") -> FieldChange:
    return FieldChange(url, job, "price", old, new)


@pytest.mark.parametrize(
    ("condition", "old", "new", "fires"),
    [
        (ChangeCondition(), 299.0, 259.0, True),
        (ChangeCondition(), "red", "blue", True),
        (ChangeCondition(below=260), 299.0, 259.0, True),
        (ChangeCondition(below=260), 299.0, 260.0, False),
        (ChangeCondition(below=260), "299", "259.00", True),  # strings that parse count
        (ChangeCondition(above=300), 299.0, 301.0, True),
        (ChangeCondition(above=300), 310.0, 299.0, False),
        (ChangeCondition(drop_percent=10), 300.0, 269.0, True),  # down 10.3 %
        (ChangeCondition(drop_percent=10), 300.0, 270.0, False),  # exactly 10 %: not more
        (ChangeCondition(drop_percent=10), 300.0, 330.0, False),  # a rise
        (ChangeCondition(rise_percent=50), 10.0, 16.0, True),
        (ChangeCondition(rise_percent=50), 10.0, 15.0, False),
        (ChangeCondition(drop_percent=10), 0.0, -5.0, False),  # a percentage of nothing
        (ChangeCondition(below=260), 299.0, "sold out", None),
        (ChangeCondition(drop_percent=10), None, 250.0, None),
        (ChangeCondition(below=260), 299.0, True, None),  # a boolean is no number
        (ChangeCondition(above=1), 0.0, "nan", None),
    ],
)
def test_conditions(condition: ChangeCondition, old: Any, new: Any, fires: bool | None) -> None:
    assert meets(condition, old, new) is fires


def test_numbers_from_processed_values_and_strings() -> None:
    assert as_number(259.0) == 259.0 and as_number(7) == 7.0 and as_number(" 12.5 ") == 12.5
    assert as_number("12 EUR") is None and as_number([1]) is None and as_number(None) is None


def test_watched_values_are_kept_and_compared_only_on_answers_that_describe_the_page() -> None:
    kept, found = watched_changes(URL, "shop", ["price"], None, 200, {"price": 299.0, "t": "K"})
    assert kept == {"price": 299.0} and found == []  # the first fetch: nothing to compare
    same, none = watched_changes(URL, "shop", ["price"], kept, 404, {})
    assert same == kept and none == []  # a 404's empty data is no change of price
    now, [change] = watched_changes(URL, "shop", ["price"], kept, 200, {"price": 259.0})
    assert now == {"price": 259.0} and change == price(299.0, 259.0)
    # A field watched only since now (a rule reloaded) has no old value yet.
    _, found = watched_changes(URL, "shop", ["price", "stock"], now, 200, {"price": 259.0})
    assert found == []


def test_a_change_fires_once_per_url_and_repeat_holds_the_same_url_back() -> None:
    engine = AlertEngine([change_rule(ChangeCondition(below=260), repeat="10m")])
    other = "http://shop.test/item/8"
    events = [
        (s.now, e.subject)
        for s in [
            snap(0, price(299.0, 259.0)),
            snap(1),  # no resolved notice for a change
            snap(60, price(259.0, 249.0), price(300.0, 280.0, other)),  # held back; not below
            snap(61, price(280.0, 250.0, other)),
            snap(700, price(249.0, 239.0)),  # 10 minutes later: sent again
        ]
        for e in engine.evaluate(s)
    ]
    assert events == [(0, URL), (61, other), (700, URL)]
    assert engine.suppressed == 1


def test_changes_of_other_jobs_or_fields_and_non_numbers_do_not_fire() -> None:
    engine = AlertEngine([change_rule(ChangeCondition(below=260))])
    stock = FieldChange(URL, "shop", "stock", 5, 1)
    assert engine.evaluate(snap(0, price(299.0, 1.0, job="blog"), stock)) == []
    assert engine.evaluate(snap(1, price(299.0, "call us"))) == []
    assert engine.take_not_numeric() == 1 and engine.take_not_numeric() == 0


def test_the_change_text_names_the_url_field_old_and_new_value() -> None:
    engine = AlertEngine([change_rule(ChangeCondition(below=260))])
    [event] = engine.evaluate(snap(0, price(299.0, 259.0)))
    assert text(event, "en") == (
        f"[WARNING] nadird: price of {URL} went from 299 to 259 (below 260), job shop"
    )
    zh = f"[警告] nadird: {URL} 的 price 从 299 变为 259（低于 260），任务 shop"
    assert text(event, "zh") == zh
    body = payload(event, "en", "m1")
    assert body["rule"] == "change" and body["subject"] == URL and body["value"] == 259.0
    assert body["details"]["old"] == 299.0 and body["details"]["when"] == "below"
    [any_change] = AlertEngine([change_rule()]).evaluate(snap(0, price("a", None)))
    assert "went from a to (nothing), job shop" in text(any_change, "en")


def test_a_revisit_row_keeps_the_watched_values_and_hands_on_durable_changes(
    tmp_path: Path,
) -> None:
    jobs = config_from_dict({"jobs": {"shop": {"revisit": {"every": "1h"}}}}, "t.yaml").jobs
    db = FrontierDB(tmp_path / "f.db")
    revisits = Revisits(db.revisits, Frontier(db), dict(jobs))
    revisits.watch = {"shop": ("price",)}

    def fetch(value: Any, signature: str, status: int = 200, settle: bool = True) -> None:
        data = {"price": value} if status == 200 else {}
        page = PageResult(
            url=URL,
            fp=fingerprint(URL),
            final_url=URL,
            status=status,
            fetched_at=0.0,
            depth=0,
            data=data,
            signature=signature,
        )
        revisits.on_page(page, "shop")
        if settle:
            revisits.settle([page.fp])

    fetch(299.0, "s1")
    fetch(None, "s1", status=304)
    assert revisits.take_field_changes() == []
    fetch(259.0, "s2", settle=False)
    assert revisits.take_field_changes() == []  # not durable yet: nothing to tell
    revisits.settle([fingerprint(URL)])
    assert revisits.take_field_changes() == [price(299.0, 259.0)]
    db.commit()
    db.close()
    again = FrontierDB(tmp_path / "f.db")  # the old values survive a restart
    entry = again.revisits.get(fingerprint(URL))
    assert entry is not None and entry.watched == {"price": 259.0}


def test_job_scoped_rules_see_their_jobs_counts_only() -> None:
    tallies, blocks = JobTallies(), BlockStreaks()
    tallies.answered("shop", "a.test", 20)
    tallies.answered("blog", "a.test", 20)
    for _ in range(15):
        tallies.failed("blog", "a.test")
    blocks.hit("b.test", 4, "blog")
    assert tallies.domains("shop") == {"a.test": (20, 0)}
    assert tallies.domains("blog") == {"a.test": (20, 15)} and blocks.of_job("shop") == {}
    rules = [
        RuleConfig(type="error_rate", channels=["hook"], job="shop", count=10),
        RuleConfig(type="error_rate", channels=["hook"], job="blog", count=10),
        RuleConfig(type="blocked", channels=["hook"], job="shop", count=3),
        RuleConfig(type="dead_letters", channels=["hook"], job="shop"),
    ]
    engine = AlertEngine(rules)

    def jobs(now: float, dead: int) -> dict[str, Snapshot]:
        return {
            name: snap(now, domains=tallies.domains(name), blocked=blocks.of_job(name))
            for name in ("shop", "blog")
        } | {"shop": snap(now, domains=tallies.domains("shop"), dead_letters=dead)}

    # The whole master sees the blog's errors and block streak; only the blog's rule fires.
    whole = {"domains": {"a.test": (40, 15)}, "blocked": {"b.test": 4}, "dead_letters": 3}
    assert engine.evaluate(snap(0, **whole, jobs=jobs(0, 0))) == []  # a first sample
    tallies.answered("blog", "a.test", 20)
    for _ in range(15):
        tallies.failed("blog", "a.test")
    fired = engine.evaluate(snap(1, **whole, jobs=jobs(1, 1)))
    assert [(e.index, e.subject) for e in fired] == [(1, "a.test"), (3, "crawl")]
    # A job without a snapshot (deleted) fires nothing.
    assert AlertEngine(rules[:1]).evaluate(snap(2, **whole)) == []


def test_reload_keeps_open_alerts_of_rules_that_stay_and_starts_new_ones() -> None:
    stall = RuleConfig(type="stall", channels=["hook"], after=60)
    blocked = RuleConfig(type="blocked", channels=["hook"], count=3)
    engine = AlertEngine([stall])
    assert engine.evaluate(snap(0)) == []
    [firing] = engine.evaluate(snap(60))
    assert firing.state == "firing"
    assert engine.reload([blocked, stall]) == 1
    # The stall stays open at its new place: not sent again; the new rule fires.
    events = engine.evaluate(snap(61, blocked={"a.test": 5}))
    assert [(e.index, e.subject, e.state) for e in events] == [(0, "a.test", "firing")]
    assert engine.active() == [(0, "a.test"), (1, "crawl")]
    assert engine.reload([blocked]) == 1  # the stall rule is gone: no resolved notice
    assert engine.evaluate(snap(62, blocked={"a.test": 6}, stored=1)) == []


def alerts_config(rule: dict[str, Any], job: dict[str, Any] | None = None) -> dict[str, Any]:
    job = {"fields": {"price": [{"css": ".price"}]}, "revisit": {"every": "1h"}} | (job or {})
    return {
        "jobs": {"shop": job},
        "alerts": {
            "channels": {"hook": {"type": "webhook", "url": "http://127.0.0.1:9/hook"}},
            "rules": [{"type": "change", "channels": ["hook"], **rule}],
        },
    }


@pytest.mark.parametrize(
    ("rule", "job", "key", "says"),
    [
        ({"fields": ["price"]}, None, "alerts.rules[0]", "needs job and fields"),
        ({"job": "shop", "fields": ["cost"]}, None, "alerts.rules[0].fields[0]", "(price)"),
        ({"job": "shop", "fields": ["price"]}, {"revisit": None}, "alerts.rules[0].job", "never"),
        (
            {"job": "shop", "fields": ["price"], "when": {"below": 1, "above": 2}},
            None,
            "alerts.rules[0].when",
            "at most one of below, above",
        ),
        (
            {"job": "shop", "fields": ["price"], "when": {"under": 1}},
            None,
            "alerts.rules[0].when.under",
            "above, below, drop_percent, rise_percent",
        ),
        (
            {"job": "shop", "fields": ["price"], "when": "sometimes"},
            None,
            "alerts.rules[0].when",
            "'any'",
        ),
    ],
)
def test_bad_change_rules_name_the_key(
    rule: dict[str, Any], job: dict[str, Any] | None, key: str, says: str
) -> None:
    with pytest.raises(ConfigError) as info:
        config_from_dict(alerts_config(rule, job), "m.yaml")
    assert info.value.key == key
    assert says in info.value.expected


def test_a_change_rule_loads() -> None:
    rule = {"job": "shop", "fields": ["price"], "when": {"drop_percent": 5}}
    [loaded] = config_from_dict(alerts_config(rule), "m.yaml").alerts.rules
    assert loaded.condition.kind == "drop_percent" and loaded.condition.limit == 5.0


def test_the_manuals_change_example_loads() -> None:
    import yaml

    page = (REPO / "docs" / "operations" / "alerts.md").read_text()
    section = page.split("## Change alerts", 1)[1]
    block = section.split("```yaml", 1)[1].split("```", 1)[0]
    rules = config_from_dict(yaml.safe_load(block), "docs/operations/alerts.md").alerts.rules
    assert [r.condition.kind for r in rules] == ["below", "drop_percent", "any"]
