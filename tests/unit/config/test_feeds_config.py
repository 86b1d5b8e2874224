"""`feeds:` in a config file: true, a mapping, clear errors for the rest,
and the hubs' schedule placed before the job's own revisit rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from nadird.common.errors import ConfigError
from nadird.config import load_config
from nadird.job.feeds import FeedsSpec
from nadird.job.spec import Job
from nadird.revisit.policy import Adaptive, Fixed


def load(tmp_path: Path, feeds: str, extra: str = "") -> Job:
    path = tmp_path / "jobs.yaml"
    path.write_text(f"jobs:\n  news:\n    feeds: {feeds}\n{extra}")
    return load_config(path).jobs["news"]


def test_true_takes_the_defaults_and_a_mapping_sets_them(tmp_path: Path) -> None:
    assert load(tmp_path, "true").feeds == FeedsSpec()
    assert load(tmp_path, "{max_page: 0, max_entries: 50}").feeds == FeedsSpec(
        max_page=0, max_entries=50
    )
    assert load(tmp_path, "false").feeds is False
    assert load(tmp_path, "{recheck: 1h}").feeds == FeedsSpec(recheck="1h")
    assert load(tmp_path, "{recheck: 600}").feeds == FeedsSpec(recheck=600)
    # The wire form (a mapping) comes back as the same spec on a worker.
    job = load(tmp_path, "{max_page: 3}")
    assert Job.from_wire(job.to_wire()).feeds == job.feeds


def test_feeds_and_sitemaps_are_hubs_first_then_the_jobs_rules(tmp_path: Path) -> None:
    revisit = "    revisit: {rules: [{match: '/articles/', every: 1h}]}\n"
    policy = load(tmp_path, "{revisit: {every: 5s}}", revisit).revisit_policy()
    assert policy is not None
    site = "http://news.test"
    for hub in ("/feed.xml", "/rss", "/atom.xml", "/feed.json", "/news-sitemap.xml", "/"):
        assert policy.schedule_for(site + hub) == Fixed(5.0), hub
    assert policy.schedule_for(f"{site}/articles/7") == Fixed(3600.0)
    assert policy.schedule_for(f"{site}/tag/world") is None  # fetched once
    # Without a revisit of its own the job still revisits its hubs (adaptively).
    plain = load(tmp_path, "true").revisit_policy()
    assert plain is not None and isinstance(plain.schedule_for(site + "/"), Adaptive)
    assert plain.schedule_for(f"{site}/articles/7") is None


@pytest.mark.parametrize(
    ("feeds", "says"),
    [
        ("{max_pages: 1}", "jobs.news.feeds.max_pages: unknown key; expected one of: "),
        ("{max_page: -1}", "jobs.news.feeds: max_page: must be >= 0"),
        ("{max_entries: 0}", "jobs.news.feeds: max_entries: must be > 0"),
        ("{hubs: '(['}", "jobs.news.feeds: hubs: invalid regex"),
        ("{learn: -1}", "jobs.news.feeds: learn: must be >= 0"),
        ("{forget: 0}", "jobs.news.feeds: forget: must be > 0"),
        ("{recheck: soon}", "jobs.news.feeds: recheck: expected never or a duration like 90s"),
        ("{revisit: {every: soon}}", "jobs.news.feeds.revisit.every: expected a duration"),
        ("{revisit: {rules: []}}", "jobs.news.feeds.revisit"),
        ("sometimes", "jobs.news.feeds: expected bool or mapping"),
    ],
)
def test_a_wrong_value_is_refused_naming_the_key(tmp_path: Path, feeds: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, feeds)
    assert says in str(caught.value)
