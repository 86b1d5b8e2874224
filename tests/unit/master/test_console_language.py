"""The console's catalog and how a page's language is chosen (pure logic:
no server). The pages themselves, in both languages: test_console_zh.py."""

from __future__ import annotations

import re
import string
from typing import get_args

import pytest
from support import REPO

from nadird.config import ConfigError, config_from_dict
from nadird.config.alerts import Severity
from nadird.master.alerts.engine import State
from nadird.master.console.catalog import CATALOGS, EN, ZH_CN
from nadird.master.console.domains import SORTS
from nadird.master.console.language import Strings, choose, from_accept_language

CONSOLE = REPO / "nadird" / "master" / "console"


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_both_catalogs_have_the_same_keys_and_the_same_placeholders() -> None:
    assert set(EN) == set(ZH_CN)
    for key, english in EN.items():
        assert placeholders(english) == placeholders(ZH_CN[key]), key
        assert ZH_CN[key].strip() and english.strip(), key


def test_every_key_the_templates_and_handlers_ask_for_is_in_the_catalog() -> None:
    asked: set[str] = set()
    for template in (CONSOLE / "templates").glob("*.html"):
        asked |= set(re.findall(r"""\bt\(\s*["']([a-z_]+\.[a-z_]+)["']""", template.read_text()))
        # t("a" if x else "b"): both branches
        asked |= set(re.findall(r"""["']([a-z_]+\.[a-z_]+)["'] if """, template.read_text()))
    for module in CONSOLE.glob("*.py"):
        found = re.findall(r'"((?:notice|error|login|nav)\.[a-z_]+)"', module.read_text())
        asked |= {key for key in found if not key.endswith(".html")}
    assert len(asked) > 100  # the scan found the templates' strings
    assert asked - set(EN) == set()


@pytest.mark.parametrize(
    ("prefix", "values"),
    [
        ("state", ["done", "leased", "in_lease", "being_stored", "waiting", "ready"]),
        ("worker", ["idle", "busy", "offline"]),
        ("alert", [*get_args(State), *get_args(Severity)]),
        ("sort", list(SORTS)),
    ],
)
def test_every_value_shown_in_a_table_has_a_label_in_both_languages(
    prefix: str, values: list[str]
) -> None:
    for catalog in CATALOGS.values():
        for value in values:
            assert f"{prefix}.{value}" in catalog, (prefix, value)


def test_domain_states_are_the_catalogs_keys() -> None:
    source = (CONSOLE / "domains.py").read_text()
    states = set(re.findall(r'return "([a-z_]+)"|"([a-z_]+)" if ds', source))
    named = {a or b for a, b in states} | set(re.findall(r'else "([a-z_]+)"', source))
    assert named and all(f"state.{s}" in EN for s in named), named


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("zh-CN,zh;q=0.9", "zh-CN"),
        ("zh", "zh-CN"),
        ("zh-Hans", "zh-CN"),
        ("ZH-cn", "zh-CN"),
        ("en-US,en;q=0.9,zh-CN;q=0.8", "en"),
        ("en;q=0.5, zh-CN;q=0.8", "zh-CN"),  # q, not order, decides
        ("fr-FR, zh;q=0.4", "zh-CN"),  # the first we have
        ("zh-TW", None),  # Traditional: not Simplified
        ("zh-Hant, de", None),
        ("zh-CN;q=0", None),  # q=0: not acceptable
        ("zh-CN;q=abc", None),
        ("*", None),
        ("", None),
        (None, None),
        ("en;q=0.9, zh;q=0.9", "en"),  # a tie: the first named
    ],
)
def test_accept_language_honours_q_values(header: str | None, expected: str | None) -> None:
    assert from_accept_language(header) == expected


def test_a_query_beats_the_cookie_beats_the_setting_beats_the_browser() -> None:
    browser = "zh-CN,zh;q=0.9"
    assert choose(None, None, browser, "auto") == "zh-CN"
    assert choose(None, None, "de", "auto") == "en"
    assert choose(None, None, browser, "en") == "en"
    assert choose(None, "en", browser, "auto") == "en"
    assert choose(None, "zh-CN", "en", "en") == "zh-CN"
    assert choose("en", "zh-CN", browser, "zh-CN") == "en"
    assert choose("xx", "zh-CN", "en", "en") == "zh-CN"  # an unknown value is no choice


def test_templates_escape_parameters_but_not_markup_they_build() -> None:
    from nadird.master.console.language import code

    zh = Strings("zh-CN")
    assert str(zh.t("notice.paused", job="<b>")) == "任务 &lt;b&gt; 已暂停。"
    assert "<code>alerts.rules</code>" in str(zh.t("alerts.no_rules", key=code("alerts.rules")))
    assert zh.label("worker", "busy") == "忙碌"
    assert zh.label("worker", "rebooting") == "rebooting"  # unknown: the value itself


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ({"language": "fr"}, "console.language"),
        ({"language": "zh"}, "console.language"),
        ({"login_failures": 0}, "console"),
        ({"login_window": -1}, "console"),
        ({"login_clients": 0}, "console"),
        ({"login_limit": 5}, "console.login_limit"),
    ],
)
def test_a_wrong_console_setting_names_its_key(section: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError) as raised:
        config_from_dict({"console": section}, "master.yaml")
    assert raised.value.key == key


def test_console_settings_are_read() -> None:
    config = config_from_dict(
        {"console": {"language": "zh-CN", "login_failures": 3, "login_window": 60}}, "m.yaml"
    )
    assert config.console.language == "zh-CN"
    assert (config.console.login_failures, config.console.login_window) == (3, 60.0)
