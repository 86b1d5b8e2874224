"""Revisit policies built from config data; every error names its key."""

from __future__ import annotations

from typing import Any

import pytest

from nadird.common.errors import ConfigError
from nadird.revisit.parse import parse_revisit
from nadird.revisit.policy import Adaptive, Cron, Fixed

KEY = "jobs.shop.revisit"


def parse(data: Any) -> Any:
    return parse_revisit(data, KEY, "shop.yaml")


def test_fixed_interval_with_jitter() -> None:
    policy = parse({"every": "6h", "jitter": 0.1})
    assert policy.default == Fixed(every=21600, jitter=0.1)
    assert policy.schedule_for("https://a.test/x") == policy.default
    assert policy.expire is None


def test_adaptive_and_its_first_interval() -> None:
    policy = parse({"adaptive": {"min": "5m", "max": "14d"}})
    assert policy.default == Adaptive(min=300, max=1209600)
    assert isinstance(policy.default, Adaptive)
    assert policy.default.first_interval == pytest.approx(19049, abs=1)
    chosen = parse({"adaptive": {"min": "5m", "max": "14d", "initial": "1h"}}).default
    assert isinstance(chosen, Adaptive) and chosen.first_interval == 3600


def test_cron_with_timezone() -> None:
    policy = parse({"cron": "*/10 8-20 * * 1-5", "timezone": "Asia/Shanghai"})
    assert policy.default == Cron(expr="*/10 8-20 * * 1-5", timezone="Asia/Shanghai")
    assert parse({"cron": "0 3 * * *"}).default == Cron(expr="0 3 * * *", timezone="UTC")


def test_rules_first_match_wins_then_default() -> None:
    policy = parse(
        {
            "rules": [
                {"match": "/category/", "every": "10m"},
                {"match": "/item/", "adaptive": {"min": "1h", "max": "7d"}},
                {"match": "/cart/", "never": True},
                {"match": "/item/special", "every": "1m"},
            ],
            "default": {"every": "1d"},
            "expire": "30d",
        }
    )
    assert policy.schedule_for("https://s.test/category/shoes") == Fixed(every=600)
    assert policy.schedule_for("https://s.test/item/special") == Adaptive(min=3600, max=604800)
    assert policy.schedule_for("https://s.test/cart/1") is None
    assert policy.schedule_for("https://s.test/about") == Fixed(every=86400)
    assert policy.expire == 30 * 86400


def test_rules_without_default_leave_the_rest_alone() -> None:
    policy = parse({"rules": [{"match": r"\.xml$", "every": "1h"}]})
    assert policy.schedule_for("https://s.test/feed.xml") == Fixed(every=3600)
    assert policy.schedule_for("https://s.test/page") is None


def test_expire_alone_and_when_it_applies() -> None:
    policy = parse({"expire": "30d"})
    assert policy.default is None and policy.rules == ()
    assert not policy.expired(last_fetch=1000.0, now=1000.0 + 29 * 86400)
    assert policy.expired(last_fetch=1000.0, now=1000.0 + 30 * 86400)
    assert not parse({"every": "1h"}).expired(0.0, 1e12)


DURATION = "expected a duration like 90s, 5m, 6h, 14d or 1h30m"


@pytest.mark.parametrize(
    ("data", "key", "expected"),
    [
        ({"adaptive": {"min": "soon", "max": "1d"}}, "adaptive.min", f"{DURATION}, got 'soon'"),
        ({"adaptive": {"min": "1h", "max": "5m"}}, "adaptive.max", "a duration >= min (1h)"),
        ({"adaptive": {"max": "5m"}}, "adaptive.min", "required"),
        ({"adaptive": {"min": "5m"}}, "adaptive.max", "required"),
        ({"adaptive": {"min": "5m", "max": "1d", "initial": "2d"}}, "adaptive.initial", "within"),
        ({"adaptive": {"min": "5m", "max": "1d", "mn": 1}}, "adaptive.mn", "unknown key"),
        ({"adaptive": "fast"}, "adaptive", "expected a mapping, got str"),
        ({"every": "0s"}, "every", "a duration > 0"),
        ({"every": -3}, "every", "a duration >= 0"),
        ({"every": "6h", "jitter": 1.5}, "jitter", "a fraction in [0, 1)"),
        ({"every": "6h", "jitter": True}, "jitter", "a fraction in [0, 1)"),
        ({"adaptive": {"min": 1, "max": 2}, "jitter": 0.1}, "jitter", "only allowed with every"),
        ({"every": "1h", "timezone": "UTC"}, "timezone", "only allowed with cron"),
        ({"every": "1h", "cron": "* * * * *"}, "", "exactly one of every, adaptive, cron"),
        ({"jitter": 0.1}, "", "exactly one of"),
        ({"evry": "1h"}, "evry", "unknown key (expected one of: every, jitter"),
        ({"cron": "*/10 25 * * *"}, "cron", "cron expression like"),
        ({"cron": "bad"}, "cron", "got 'bad'"),
        ({"cron": "0 0 31 2 *"}, "cron", "cron expression"),
        ({"cron": 5}, "cron", "a non-empty string, got 5"),
        ({"cron": "* * * * *", "timezone": "Mars/Olympus"}, "timezone", "IANA time zone"),
        ({"cron": "* * * * *", "timezone": "../etc/passwd"}, "timezone", "IANA time zone"),
        ({"expire": "later"}, "expire", DURATION),
        ({}, "", "expected every, adaptive, cron, rules or expire"),
        ({"rules": {"match": "x"}}, "rules", "a list of rules, got dict"),
        ({"rules": [{"every": "1h"}]}, "rules[0].match", "required"),
        ({"rules": [{"match": "(", "every": "1h"}]}, "rules[0].match", "regular expression"),
        ({"rules": [{"match": "x"}]}, "rules[0]", "exactly one of"),
        ({"rules": [{"match": "x", "never": "yes"}]}, "rules[0].never", "true or false"),
        ({"rules": [{"match": "x", "never": True, "every": 5}]}, "rules[0].every", "never"),
        (
            {"rules": [{"match": "x", "every": 5}, {"match": "y", "adaptive": {"min": "x"}}]},
            "rules[1].adaptive.max",
            "required",
        ),
        ({"rules": [], "every": "1h"}, "every", "put it under default:"),
        ({"default": {"cron": "* * * * *", "rules": []}}, "default.rules", "unknown key"),
        ({"default": {"every": "soon"}}, "default.every", DURATION),
        ("6h", "", "expected a mapping, got str"),
    ],
)
def test_errors_name_the_key(data: Any, key: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(data)
    full_key = f"{KEY}.{key}" if key and not key.startswith("[") else KEY + key
    assert caught.value.key == full_key
    assert caught.value.source == "shop.yaml"
    assert expected in caught.value.expected
    assert str(caught.value).startswith(f"shop.yaml: {full_key}: ")


def test_the_message_reads_as_one_line() -> None:
    with pytest.raises(ConfigError) as caught:
        parse({"adaptive": {"min": "soon", "max": "14d"}})
    assert str(caught.value) == (
        "shop.yaml: jobs.shop.revisit.adaptive.min: "
        "expected a duration like 90s, 5m, 6h, 14d or 1h30m, got 'soon'"
    )
