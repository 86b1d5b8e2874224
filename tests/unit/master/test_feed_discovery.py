"""The master's account of a feeds job (master/observe/discovery.py): articles
by the source that named them, entries left out, and discovery latency from
the stated publication, only for articles published while the feed was
watched. What the feeds named is kept in frontier.db: a restarted master
still fills and times the articles they named."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from support.core_helpers import page

from nadird.common.typecheck import build
from nadird.common.urls import fingerprint
from nadird.job.feeds import is_article
from nadird.job.spec import Job
from nadird.master.observe.discovery import Discovery
from nadird.master.state.feed_db import MAX_AGE, TRIM_EVERY
from nadird.master.state.frontier_db import FrontierDB
from nadird.protocol.messages import PageResult

SITE = "http://news.test"
JOB = build(Job, {"feeds": True})
NOW = 1_800_000_000.0


class Master:
    """What the master does with a feeds job's result (master/core.py): note
    it as it comes in, admit its links (the seen set here: a set), then note
    the new articles it named; its state in a real frontier.db."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = FrontierDB(path)
        self.found = Discovery(self.db.feed_named)
        self.seen: set[bytes] = set()

    def result(self, page: PageResult, now: float, job: Job = JOB, hub: bool = False) -> None:
        self.found.on_page(page, job, now, hub)
        named = zip(page.links, page.link_fps, strict=True)
        new = [fp for url, fp in named if fp not in self.seen and is_article(url, False)]
        self.seen.update(new)
        self.found.named(page, job, new, hub, now)

    def restart(self) -> None:
        self.db.close()
        self.db = FrontierDB(self.path)
        self.found = Discovery(self.db.feed_named)


@pytest.fixture
def master(tmp_path: Path) -> Master:
    return Master(tmp_path / "frontier.db")


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat()


def _feed(entries: list[tuple[str, float | None]], failed: int = 0) -> PageResult:
    urls = [f"{SITE}{path}" for path, _ in entries]
    data = {
        "_feed": {"kind": "rss", "entries": len(entries), "no_url": failed, "bad_date": 0},
        "entries": [
            {"url": url, **({"published": _iso(t)} if t is not None else {})}
            for url, (_, t) in zip(urls, entries, strict=True)
        ],
    }
    return page(f"{SITE}/feed.xml", data=data, links=urls, link_fps=[fingerprint(u) for u in urls])


def _links(url: str, *paths: str) -> PageResult:
    links = [f"{SITE}{path}" for path in paths]
    return page(url, links=links, link_fps=[fingerprint(u) for u in links])


def test_articles_are_counted_by_source_and_timed_from_their_stated_date(master: Master) -> None:
    # First read of the feed: what it lists then is as old as the site.
    master.result(_feed([("/a/1", NOW - 3600)], failed=2), NOW)
    master.result(page(f"{SITE}/a/1"), NOW + 1)
    # Later reads list what appeared since: timed.
    master.result(_feed([("/a/2", NOW + 10), ("/a/3", None), ("/a/1", NOW - 3600)]), NOW + 11)
    master.result(page(f"{SITE}/a/2"), NOW + 14)
    master.result(page(f"{SITE}/a/3"), NOW + 15)
    master.result(_links(f"{SITE}/", "/a/4"), NOW + 16)
    master.result(page(f"{SITE}/a/4"), NOW + 17)
    master.result(page(f"{SITE}/tag/world"), NOW + 18)  # a listing: not an article
    master.result(page(f"{SITE}/a/5"), NOW + 19)
    status = master.found.status()["default"]
    assert status["articles"] == {"feed": 3, "hub": 1, "link": 1}
    assert status["failed_entries"] == {"no_url": 2}
    assert status["latency"] == {"news.test": {"count": 1, "p50": 4.0, "p95": 4.0}}
    registry = CollectorRegistry()
    registry.register(master.found)
    text = generate_latest(registry).decode()
    assert 'nadird_discovery_latency_seconds_bucket{job="default",le="5.0"} 1.0' in text
    assert 'nadird_feed_articles_total{job="default",source="feed"} 3.0' in text
    assert 'nadird_feed_entries_failed_total{job="default",reason="no_url"} 2.0' in text


def test_a_job_without_feeds_is_not_followed(master: Master) -> None:
    master.result(_feed([("/a/1", NOW)]), NOW, build(Job, {}))
    master.result(page(f"{SITE}/a/1"), NOW, build(Job, {}))
    assert master.found.status() == {}


def test_an_article_a_home_page_named_first_is_timed_by_its_feed_date(master: Master) -> None:
    master.result(_feed([]), NOW)  # the feed watched from NOW
    link = f"{SITE}/a/7"
    master.result(_links(f"{SITE}/", "/a/7"), NOW + 5)
    master.result(_feed([("/a/7", NOW + 4)]), NOW + 6)
    master.result(page(link), NOW + 7)
    status = master.found.status()["default"]
    assert status["articles"] == {"hub": 1}
    assert status["latency"]["news.test"]["p50"] == 3.0


def test_what_an_entry_stated_fills_the_article_item_where_the_page_states_nothing(
    master: Master,
) -> None:
    stated = {"title": "Budget vote", "published": _iso(NOW), "updated": _iso(NOW + 60)}
    feed = _feed([("/a/1", NOW), ("/a/2", NOW)])
    entries = feed.data["entries"]
    assert isinstance(entries, list)
    entries[0].update(stated)
    entries[1].update(stated)
    master.result(feed, NOW + 1)
    own = page(f"{SITE}/a/1", data={"title": "The budget vote, as the page says", "text": "t"})
    master.result(own, NOW + 2)
    assert own.data == {
        "title": "The budget vote, as the page says",  # the page's own wins
        "text": "t",
        "published": stated["published"],
        "modified": stated["updated"],
        "_from_feed": ["published", "modified"],
    }
    bare = page(f"{SITE}/a/2", data={"title": ""})  # empty: stated nothing
    master.result(bare, NOW + 3)
    assert bare.data["title"] == "Budget vote" and bare.data["_from_feed"][0] == "title"
    unlisted = page(f"{SITE}/a/3", data={})
    master.result(unlisted, NOW + 4)
    assert unlisted.data == {}  # no entry named it: nothing filled
    assert master.found.filled == 2


def test_a_learned_hubs_links_count_as_hub_and_its_own_fetch_not_as_an_article(
    master: Master,
) -> None:
    section = f"{SITE}/world/latest"  # no hub by address: learned (revisits/learned_hubs.py)
    master.result(_links(section, "/a/1", "/a/2"), NOW, hub=True)
    master.result(_links(f"{SITE}/a/1", "/a/3"), NOW + 1)  # an article: its links are "link"
    for path in ("/a/2", "/a/3"):
        master.result(page(f"{SITE}{path}"), NOW + 2)
    master.result(_links(section, "/a/4"), NOW + 3, hub=True)  # checked again: not an article
    assert master.found.status()["default"]["articles"] == {"hub": 2, "link": 1}


def test_what_a_feed_named_is_filled_and_timed_after_a_master_restart(master: Master) -> None:
    master.result(_feed([("/a/1", NOW - 3600)]), NOW)  # the feed watched from NOW
    master.restart()
    feed = _feed([("/a/2", NOW + 10), ("/a/1", NOW - 3600)])
    entries = feed.data["entries"]
    assert isinstance(entries, list)
    entries[0]["title"] = "Budget vote"
    master.result(feed, NOW + 12)
    master.restart()  # between the feed's fetch and the article's
    article = page(f"{SITE}/a/2", data={})
    master.result(article, NOW + 15)
    assert article.data == {
        "title": "Budget vote",
        "published": _iso(NOW + 10),
        "_from_feed": ["title", "published"],
    }
    status = master.found.status()["default"]
    assert status["articles"] == {"feed": 1}
    # Timed: published after the feed was first read, before the restarts.
    assert status["latency"] == {"news.test": {"count": 1, "p50": 5.0, "p95": 5.0}}
    master.result(page(f"{SITE}/a/1"), NOW + 16)
    assert master.db.feed_named.waiting() == 0  # each naming gone with its article


def test_namings_whose_article_never_comes_are_trimmed_after_an_age(master: Master) -> None:
    master.result(_feed([(f"/a/{k}", NOW) for k in range(TRIM_EVERY)]), NOW)
    assert master.db.feed_named.waiting() == TRIM_EVERY
    later = NOW + MAX_AGE + 1
    master.result(_feed([(f"/b/{k}", later) for k in range(TRIM_EVERY)]), later)
    assert master.db.feed_named.waiting() == TRIM_EVERY  # only the fresh ones
