"""The worker's politeness settings: defaults, strict loading, job switches."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from nadird.common.errors import ConfigError
from nadird.config import Config, config_from_dict, load_config
from nadird.job.spec import Job


def test_defaults_are_polite() -> None:
    fetch = Config().fetch
    assert "http" in fetch.user_agent  # a contact URL placeholder to replace
    assert fetch.robots.user_agent == "nadird" and fetch.robots.ttl == 3600.0
    assert fetch.throttle.adaptive and fetch.throttle.target_concurrency == 1.0
    assert "utm_*" in fetch.strip_params and "jsessionid" in fetch.strip_params
    job = Job()
    assert job.robots and not job.sitemaps and job.proxies
    assert job.max_pages_per_domain is None and job.strip_params is None


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("fetch:\n  allow_networks: [not-a-net]\n", "fetch"),
        ("fetch:\n  robots:\n    ttl: 0\n", "fetch.robots"),
        ("fetch:\n  throttle:\n    jitterr: 1\n", "fetch.throttle.jitterr"),
        ("fetch:\n  proxies:\n    urls: [ftp://x]\n", "fetch.proxies"),
        ("jobs:\n  a:\n    sitemaps: maybe\n", "jobs.a.sitemaps"),
    ],
)
def test_bad_values_name_the_key(tmp_path: Path, text: str, key: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.key == key


def test_fetch_settings_survive_the_trip_to_a_worker_file() -> None:
    # `nadird crawl` writes asdict(config.fetch) for its workers.
    data = {
        "fetch": {
            "allow_networks": ["127.0.0.1/32"],
            "robots": {"user_agent": "mybot"},
            "proxies": {"urls": ["http://127.0.0.1:3128"]},
        },
        "jobs": {"j": {"robots": False, "sitemaps": True, "max_pages_per_domain": 5}},
    }
    config = config_from_dict(data, "test")
    again = config_from_dict(
        yaml.safe_load(yaml.safe_dump({"fetch": dataclasses.asdict(config.fetch)})), "again"
    )
    assert again.fetch == config.fetch
    job = Job.from_wire(config.jobs["j"].to_wire())
    assert (job.robots, job.sitemaps, job.max_pages_per_domain) == (False, True, 5)
