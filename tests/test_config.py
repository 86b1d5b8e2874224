import subprocess
import sys
from pathlib import Path

import pytest

from nadird.config import Config, load_config
from nadird.errors import ConfigError

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


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "nadird.yaml"
    path.write_text(text)
    return path


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
        ("log_level: loud\n", "log_level", "expected one of"),
        ("jobs:\n  j:\n    links:\n      scope: everywhere\n", "jobs.j.links.scope", "one of"),
        (
            "jobs:\n  j:\n    fields:\n      t:\n        - {css: a, xpath: b}\n",
            "jobs.j.fields.t[0]",
            "exactly one of",
        ),
        ("jobs:\n  j:\n    fields:\n      t:\n        - xpath: '//['\n", "jobs.j", "t"),
        ("seeds:\n  - url: http://a.test/\n    job: missing\n", "seeds[0].job", "unknown job"),
        ("master: [1, 2]\n", "master", "expected a mapping"),
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


def test_the_daemon_exits_2_with_one_clear_line(tmp_path: Path) -> None:
    path = write(tmp_path, "worker:\n  bags: -1\n")
    proc = subprocess.run(
        [sys.executable, "-m", "nadird", "--role", "worker", "-c", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert str(path) in lines[0] and "worker" in lines[0] and "bags must be > 0" in lines[0]
