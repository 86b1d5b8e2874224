"""The revisit keys of a job, as the config loader reads them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.cli_helpers import nadird as _nadird

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


BAD_REVISITS = [
    ("revisit: {cron: '61 * * * *'}", "revisit.cron: expected a cron expression"),
    (
        "revisit: {cron: '0 9 * * *', timezone: Mars/Olympus}",
        "revisit.timezone: expected an IANA time zone like Asia/Shanghai, got 'Mars/Olympus'",
    ),
    ("revisit: {every: soon}", "revisit.every: expected a duration like 90s"),
    ("revisit: {adaptive: {min: 5m, max: never}}", "revisit.adaptive.max: expected a duration"),
    ("expire: 30 days", "expire: expected a duration like 90s, 5m, 6h, 14d or 1h30m"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("line", "says"), BAD_REVISITS)
def test_check_and_both_roles_exit_2_naming_the_revisit_key(
    tmp_path: Path, line: str, says: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(f"jobs:\n  shop:\n    {line}\n")
    for args in (["check", "-c", str(path)], ["--role", "master", "-c", str(path)]):
        proc = _nadird(*args, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.startswith(f"nadird: error: {path}: jobs.shop.{says}"), proc.stderr
    assert list(tmp_path.iterdir()) == [path]  # no state directory: nothing started


@pytest.mark.slow
def test_crawl_exits_2_on_a_bad_revisit_in_its_config_or_option(tmp_path: Path) -> None:
    base = tmp_path / "base.yaml"
    base.write_text("jobs:\n  default:\n    revisit: {cron: '0 9 * * *', timezone: Mars}\n")
    proc = _nadird("crawl", "http://a.test/", "-c", str(base), cwd=tmp_path)
    assert proc.returncode == 2
    assert f"{base}: jobs.default.revisit.timezone: expected an IANA time zone" in proc.stderr
    proc = _nadird("crawl", "http://a.test/", "--revisit", "soon", cwd=tmp_path)
    assert proc.returncode == 2
    assert "argument --revisit: expected a duration like 90s" in proc.stderr
    assert list(tmp_path.iterdir()) == [base]  # no store, no state: nothing ran
