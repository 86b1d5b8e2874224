"""Loading a config file: typed sections, errors naming file, key and line,
finite floats."""

import argparse
import dataclasses
import typing
from pathlib import Path

import pytest
from support.config_helpers import write

from nadird.cli.argtypes import finite_float, non_negative_float
from nadird.common.errors import ConfigError
from nadird.config import Config, load_config
from nadird.job.spec import Job

GOOD = """
node: m1
log_level: debug
master:
  bag_size: 10
  lease_ttl: 2.0
  heartbeat_interval: 0.5
politeness:
  delay: 0.25
jobs:
  products:
    fields:
      title:
        - css: h1
        - xpath: //title/text()
      price:
        - regex: 'Price: (\\d+)'
    links:
      scope: allowed-domains
      allowed_domains: [shop.test]
      deny: ['/cart']
    max_depth: 3
seeds:
  - http://shop.test/
  - url: http://other.test/
    job: products
"""


def test_a_full_config_loads_into_typed_sections(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, GOOD))
    assert config.node == "m1"
    assert config.master.bag_size == 10
    assert config.politeness.delay == 0.25
    job = config.jobs["products"]
    assert job.name == "products"
    assert [s.css or s.xpath for s in job.fields["title"]] == ["h1", "//title/text()"]
    assert job.links.allowed_domains == ["shop.test"]
    assert [s.job for s in config.seed_list()] == ["default", "products"]
    # Sections not named keep their defaults.
    assert config.store == Config().store


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        ("master:\n  bag_sise: 3\n", "master.bag_sise", "unknown key"),
        ("master:\n  bag_size: three\n", "master.bag_size", "expected int"),
        ("master:\n  bag_size: true\n", "master.bag_size", "expected int"),
        ("master:\n  bag_size: 0\n", "master", "bag_size must be > 0"),
        (
            "master:\n  revisit_allocate_interval: 0\n",
            "master",
            "revisit_allocate_interval must be > 0",
        ),
        ("log_level: loud\n", "log_level", "expected one of"),
        ("jobs:\n  j:\n    links:\n      scope: everywhere\n", "jobs.j.links.scope", "one of"),
        (
            "jobs:\n  j:\n    fields:\n      t:\n        - {css: a, xpath: b}\n",
            "jobs.j.fields.t[0]",
            "exactly one of",
        ),
        ("jobs:\n  j:\n    fields:\n      t:\n        - xpath: '//['\n", "jobs.j", "t"),
        ("jobs:\n  j:\n    links:\n      allow: ['(']\n", "jobs.j", "links.allow[0]"),
        ("seeds:\n  - url: http://a.test/\n    job: missing\n", "seeds[0].job", "unknown job"),
        ("master: [1, 2]\n", "master", "expected a mapping"),
        # An optional mapping or list is named as YAML spells it, with the value.
        (
            "jobs:\n  j:\n    revisit: 1h\n",
            "jobs.j.revisit",
            "expected mapping or null, got str '1h'",
        ),
        ("master:\n  bag_size: 3\n   bad: indent\n", "line", "valid YAML"),
    ],
)
def test_bad_configs_name_file_key_and_expectation(
    tmp_path: Path, text: str, key: str, expected: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(str(path))
    assert key in info.value.key
    assert expected in message


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_config(tmp_path / "absent.yaml")


def _float_keys(cls: type, prefix: str = "") -> list[str]:
    """Dotted paths of every float (or optional float) key under a section."""
    hints = typing.get_type_hints(cls)
    keys: list[str] = []
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        path = f"{prefix}{f.name}"
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            keys += _float_keys(tp, path + ".")
        elif tp is float or float in typing.get_args(tp):
            keys.append(path)
    return keys


def _nested_yaml(path: str, value: str) -> str:
    lines = [f"{'  ' * depth}{name}:" for depth, name in enumerate(path.split("."))]
    return "\n".join(lines) + f" {value}\n"


FLOAT_KEYS = _float_keys(Config) + [f"jobs.j.{k}" for k in _float_keys(Job)]


def test_every_section_has_float_keys_to_check() -> None:
    # The walk must find the keys it claims to cover, nested ones included.
    for key in ("politeness.delay", "master.lease_ttl", "fetch.throttle.max_delay", "jobs.j.delay"):
        assert key in FLOAT_KEYS


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", ".NaN", "1.0e+999"])
@pytest.mark.parametrize("key", FLOAT_KEYS)
def test_no_float_key_takes_nan_or_infinity(tmp_path: Path, key: str, value: str) -> None:
    path = write(tmp_path, _nested_yaml(key, value))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.source == str(path)
    assert info.value.key == key
    assert "expected a finite number" in info.value.expected


def test_non_finite_numbers_are_refused_inside_lists_too(tmp_path: Path) -> None:
    path = write(tmp_path, "seeds:\n  - http://a.test/\n  - .nan\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.key == "seeds[1]"


def test_finite_floats_still_load(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "politeness:\n  delay: 0.0\nbloom:\n  fp_rate: 1.0e-6\n"))
    assert config.politeness.delay == 0.0 and config.bloom.fp_rate == 1e-6


def test_finite_float_type_accepts_ordinary_numbers() -> None:
    assert finite_float("0.25") == 0.25 and non_negative_float("0") == 0.0
    with pytest.raises(argparse.ArgumentTypeError, match="expected a number"):
        finite_float("soon")


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ("master:\n  bag_size: 3\nworker:\n  bags: 2\nmaster:\n  bag_size: 4\n", 5, "master"),
        ("master:\n  bag_size: 3\n  lease_ttl: 9.0\n  bag_size: 4\n", 4, "bag_size"),
        ("jobs:\n  j:\n    links:\n      deny: [a]\n      deny: [b]\n", 5, "deny"),
        ("seeds:\n  - url: http://a.test/\n    url: http://b.test/\n", 3, "url"),
        ("fetch: {resolve: {a.test: 127.0.0.1, a.test: 127.0.0.2}}\n", 1, "a.test"),
    ],
)
def test_a_key_given_twice_names_the_file_and_the_line(
    tmp_path: Path, text: str, line: int, key: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.source == str(path)
    assert info.value.key == f"line {line}"
    assert f"duplicate key {key!r}" in info.value.expected


def test_merge_keys_may_still_be_overridden(tmp_path: Path) -> None:
    text = "jobs:\n  a: &base {delay: 1.0, max_depth: 2}\n  b:\n    <<: *base\n    delay: 2.0\n"
    config = load_config(write(tmp_path, text))
    assert config.jobs["b"].delay == 2.0 and config.jobs["b"].max_depth == 2
