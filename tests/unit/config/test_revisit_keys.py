"""The revisit keys of a job, as the config loader reads them."""

from __future__ import annotations

from typing import Any

import pytest

from nadird.common.errors import ConfigError
from nadird.config import config_from_dict
from nadird.job.spec import Job
from nadird.revisit.policy import Fixed


def _job(spec: dict[str, Any]) -> Job:
    return config_from_dict({"jobs": {"shop": spec}}, "shop.yaml").jobs["shop"]


def test_a_job_without_revisit_keys_is_crawled_once() -> None:
    job = _job({})
    assert job.revisit_policy() is None and not job.revisits


def test_revisit_and_expire_make_one_policy() -> None:
    job = _job({"revisit": {"every": "1s", "jitter": 0.1}, "expire": "30d"})
    policy = job.revisit_policy()
    assert policy is not None and job.revisits
    assert policy.default == Fixed(every=1.0, jitter=0.1)
    assert policy.expire == 30 * 86400


def test_expire_alone_revisits_by_discovery_only() -> None:
    policy = _job({"expire": "7d"}).revisit_policy()
    assert policy is not None and policy.default is None and policy.expire == 7 * 86400


@pytest.mark.parametrize(
    ("spec", "key", "words"),
    [
        ({"revisit": {"every": "soon"}}, "jobs.shop.revisit.every", "duration"),
        ({"revisit": {"every": "1h", "cron": "* * * * *"}}, "jobs.shop.revisit", "exactly one"),
        ({"revisit": {"sometimes": 1}}, "jobs.shop.revisit.sometimes", "unknown key"),
        ({"expire": 0}, "jobs.shop.expire", "> 0"),
        (
            {"expire": "1d", "revisit": {"every": "1h", "expire": "2d"}},
            "jobs.shop.revisit.expire",
            "twice",
        ),
        ({"signature_ignore": ["p[["]}, "jobs.shop.signature_ignore[0]", "CSS selector"),
    ],
)
def test_bad_revisit_keys_name_the_key(spec: dict[str, Any], key: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _job(spec)
    assert caught.value.source == "shop.yaml"
    assert caught.value.key == key
    assert words in caught.value.expected


def test_the_revisit_keys_travel_to_workers() -> None:
    job = _job({"revisit": {"every": "1s"}, "signature_ignore": [".clock"]})
    back = Job.from_wire(job.to_wire())
    assert back.signature_ignore == [".clock"]
    assert back.revisit_policy() == job.revisit_policy()
