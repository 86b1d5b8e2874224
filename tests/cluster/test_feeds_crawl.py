"""Following news sites end to end: `nadird crawl` with `feeds: true` on the
living news web (nadird.testing.news), judged by the server's access log."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from nadird.testing import forkserver
from nadird.testing.cluster import wait_until
from nadird.testing.living import ScaledClock
from nadird.testing.news import HOWS, NewsSite, NewsWeb
from nadird.testing.news_judge import judge_news
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow

SECONDS = 16
DELAY = 0.2
# Arrival times are read right to a kernel clock tick (see test_polite_crawl).
SLACK = 0.03
CONFIG = f"""\
fetch:
  allow_private: true
  resolve: {{'*.test': 127.0.0.1}}
jobs:
  default:
    feeds: {{revisit: {{adaptive: {{min: 0.5s, max: 10s}}}}}}
    delay: {DELAY}
    links: {{scope: same-domain}}
    max_depth: 4
"""


def _crawl(
    tmp_path: Path, seeds: list[str], text: str = CONFIG, seconds: int = SECONDS
) -> dict[str, Any]:
    config = tmp_path / "news.yaml"
    config.write_text(text)
    args = [sys.executable, "-m", "nadird", "crawl", "-c", str(config), "--for", f"{seconds}s"]
    args += ["--workers", "1", "--store", f"sqlite:///{tmp_path}/news.db", *seeds]
    proc = forkserver.run(args, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return summary


def _crawl_until(
    tmp_path: Path, seeds: list[str], text: str, enough: Callable[[], bool], limit: float = 90
) -> dict[str, Any]:
    """`nadird crawl` stopped with SIGINT once `enough()` holds: on a loaded
    machine its workers may take seconds to start, which a fixed `--for`
    would take from the time the test judges."""
    config = tmp_path / "news.yaml"
    config.write_text(text)
    args = [sys.executable, "-m", "nadird", "crawl", "-c", str(config)]
    args += ["--workers", "1", "--store", f"sqlite:///{tmp_path}/news.db", *seeds]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: enough() or proc.poll() is not None, limit, interval=0.2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err[-3000:]
    summary: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return summary


def test_new_articles_of_every_kind_of_site_are_fetched_within_seconds(tmp_path: Path) -> None:
    # One site per way of being found, each publishing every 2-3 s.
    sites = [NewsSite(f"{how}.test", how, 2.0 + k * 0.2, 20, 0.5) for k, how in enumerate(HOWS)]
    with run_in_thread() as server:
        news = NewsWeb(sites, ScaledClock(1.0)).install(server)
        started = time.time()
        summary = _crawl(tmp_path, news.seeds())
        log = server.entries()
        report = judge_news(news, log, started + 5, started + SECONDS - 3)
    assert report.published >= 20
    assert report.share_fetched >= 0.9, report
    assert report.latency_p50 is not None and report.latency_p50 <= 6, report
    # Politeness per site, and archives past page 2 never asked for.
    assert report.min_gap is not None and report.min_gap >= DELAY - SLACK, report
    assert not [e.path for e in log if re.search(r"page=([3-9]|\d\d)", e.path)]
    assert report.archive_share <= 0.25, report
    # Feeds and sitemaps were revisited with their validators (a 304 when
    # nothing appeared since; these sites publish faster than most).
    hubs = [e for e in log if e.path in ("/feed.xml", "/news-sitemap.xml")]
    assert len(hubs) >= 3 * 5 and sum(e.status == 304 for e in hubs) >= 3
    for site in sites:  # every site, however found, had its new articles
        fetched = {e.path for e in log if e.host == site.host and e.path.startswith("/articles/")}
        assert f"/articles/{site.count(0) + 2}" in fetched, site.how
    # What the master says: articles by source, latency per domain.
    feeds = summary["feeds"]["default"]
    assert {"feed", "sitemap", "hub"} <= set(feeds["articles"])
    # Timed: the articles a feed or news sitemap dated before the article was
    # stored (which of the sites' articles that is depends on the machine's
    # pace: whether the feed or the home page named them first).
    assert len(feeds["latency"]) >= 1, feeds
    # A downstream indexer polls what is new since its last read.
    everything = _export(tmp_path)
    times = sorted(_epoch(r["fetched_at"]) for r in everything)
    middle = times[len(times) // 2]
    recent = _export(tmp_path, "--since", repr(middle))
    assert len(recent) == sum(t >= middle for t in times) < len(everything)
    assert all(_epoch(r["fetched_at"]) >= middle for r in recent)


def _export(tmp_path: Path, *extra: str) -> list[dict[str, Any]]:
    args = [sys.executable, "-m", "nadird", "export", "--store", f"sqlite:///{tmp_path}/news.db"]
    proc = subprocess.run([*args, *extra], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _epoch(value: Any) -> float:
    if isinstance(value, int | float):
        return float(value)
    return datetime.fromisoformat(value).timestamp()


def test_a_home_page_that_keeps_naming_new_articles_is_learned_as_a_hub(tmp_path: Path) -> None:
    # No hub by address (`hubs: ""`), no feed: only what the home page finds
    # makes it a hub, checked again and again.
    site = NewsSite("home.test", "home", 1.5, 20, 0.5)
    config = CONFIG.replace("max: 10s}}}", 'max: 10s, initial: 0.5s}}, hubs: ""}')
    assert config != CONFIG
    with run_in_thread() as server:
        news = NewsWeb([site], ScaledClock(1.0)).install(server)

        def crawled_for(seconds: float) -> bool:
            log = server.entries()
            return bool(log) and time.time() - log[0].t_start >= seconds

        summary = _crawl_until(tmp_path, news.seeds(), config, lambda: crawled_for(14))
        log = server.entries()
        # Judged from the crawl's first request, however long it took to start.
        started = log[0].t_start
        report = judge_news(news, log, started + 5, started + 14 - 2)
    homes = [e for e in log if e.path == "/"]
    assert len(homes) >= 5, [e.t_start - started for e in homes]
    assert report.published >= 3 and report.share_fetched >= 0.8, report
    assert summary["pages"] >= report.fetched


def test_feeds_on_the_command_line_follows_a_feed_without_a_config(tmp_path: Path) -> None:
    site = NewsSite("rss.test", "rss", 1.5, 20, 0.5)
    with run_in_thread() as server:
        news = NewsWeb([site], ScaledClock(1.0)).install(server)
        args = [sys.executable, "-m", "nadird", "crawl", "--feeds", "--for", "8s"]
        args += ["--delay", "0.2", "--resolve", "*.test=127.0.0.1", "--allow-private"]
        args += ["--workers", "1", "--store", f"sqlite:///{tmp_path}/news.db", *news.seeds()]
        proc = forkserver.run(args, cwd=tmp_path, timeout=120)
        log = server.entries()
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["feeds"]["default"]["articles"].get("feed", 0) > 0, summary
    # Read as a feed, never as HTML; archive pages past max_page never asked
    # for (the hubs' first check again is after 30 s by default: later).
    assert [e.status for e in log if e.path == "/feed.xml"] == [200]
    assert not [e.path for e in log if re.search(r"page=([3-9]|\d\d)", e.path)]
