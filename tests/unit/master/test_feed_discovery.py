"""The master's account of a feeds job (master/observe/discovery.py): articles
by the source that named them, entries left out, and discovery latency from
the stated publication, only for articles published while the feed was
watched."""

from __future__ import annotations

from datetime import UTC, datetime

from prometheus_client import CollectorRegistry, generate_latest
from support.core_helpers import page

from nadird.common.typecheck import build
from nadird.common.urls import fingerprint
from nadird.job.spec import Job
from nadird.master.observe.discovery import Discovery
from nadird.protocol.messages import PageResult

SITE = "http://news.test"
JOB = build(Job, {"feeds": True})
NOW = 1_800_000_000.0


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


def test_articles_are_counted_by_source_and_timed_from_their_stated_date() -> None:
    found = Discovery()
    # First read of the feed: what it lists then is as old as the site.
    found.on_page(_feed([("/a/1", NOW - 3600)], failed=2), JOB, NOW)
    found.on_page(page(f"{SITE}/a/1"), JOB, NOW + 1)
    # Later reads list what appeared since: timed.
    found.on_page(_feed([("/a/2", NOW + 10), ("/a/3", None), ("/a/1", NOW - 3600)]), JOB, NOW + 11)
    found.on_page(page(f"{SITE}/a/2"), JOB, NOW + 14)
    found.on_page(page(f"{SITE}/a/3"), JOB, NOW + 15)
    home = page(f"{SITE}/", links=[f"{SITE}/a/4"], link_fps=[fingerprint(f"{SITE}/a/4")])
    found.on_page(home, JOB, NOW + 16)
    found.on_page(page(f"{SITE}/a/4"), JOB, NOW + 17)
    found.on_page(page(f"{SITE}/tag/world"), JOB, NOW + 18)  # a listing: not an article
    found.on_page(page(f"{SITE}/a/5"), JOB, NOW + 19)
    status = found.status()["default"]
    assert status["articles"] == {"feed": 3, "hub": 1, "link": 1}
    assert status["failed_entries"] == {"no_url": 2}
    assert status["latency"] == {"news.test": {"count": 1, "p50": 4.0, "p95": 4.0}}
    registry = CollectorRegistry()
    registry.register(found)
    text = generate_latest(registry).decode()
    assert 'nadird_discovery_latency_seconds_bucket{job="default",le="5.0"} 1.0' in text
    assert 'nadird_feed_articles_total{job="default",source="feed"} 3.0' in text
    assert 'nadird_feed_entries_failed_total{job="default",reason="no_url"} 2.0' in text


def test_a_job_without_feeds_is_not_followed() -> None:
    found = Discovery()
    found.on_page(_feed([("/a/1", NOW)]), build(Job, {}), NOW)
    found.on_page(page(f"{SITE}/a/1"), build(Job, {}), NOW)
    assert found.status() == {}


def test_an_article_a_home_page_named_first_is_timed_by_its_feed_date() -> None:
    found = Discovery()
    found.on_page(_feed([]), JOB, NOW)  # the feed watched from NOW
    link = f"{SITE}/a/7"
    found.on_page(page(f"{SITE}/", links=[link], link_fps=[fingerprint(link)]), JOB, NOW + 5)
    found.on_page(_feed([("/a/7", NOW + 4)]), JOB, NOW + 6)
    found.on_page(page(link), JOB, NOW + 7)
    status = found.status()["default"]
    assert status["articles"] == {"hub": 1}
    assert status["latency"]["news.test"]["p50"] == 3.0


def test_what_an_entry_stated_fills_the_article_item_where_the_page_states_nothing() -> None:
    found = Discovery()
    stated = {"title": "Budget vote", "published": _iso(NOW), "updated": _iso(NOW + 60)}
    feed = _feed([("/a/1", NOW), ("/a/2", NOW)])
    entries = feed.data["entries"]
    assert isinstance(entries, list)
    entries[0].update(stated)
    entries[1].update(stated)
    found.on_page(feed, JOB, NOW + 1)
    own = page(f"{SITE}/a/1", data={"title": "The budget vote, as the page says", "text": "t"})
    found.on_page(own, JOB, NOW + 2)
    assert own.data == {
        "title": "The budget vote, as the page says",  # the page's own wins
        "text": "t",
        "published": stated["published"],
        "modified": stated["updated"],
        "_from_feed": ["published", "modified"],
    }
    bare = page(f"{SITE}/a/2", data={"title": ""})  # empty: stated nothing
    found.on_page(bare, JOB, NOW + 3)
    assert bare.data["title"] == "Budget vote" and bare.data["_from_feed"][0] == "title"
    unlisted = page(f"{SITE}/a/3", data={})
    found.on_page(unlisted, JOB, NOW + 4)
    assert unlisted.data == {}  # no entry named it: nothing filled
    assert found.fields.filled == 2
