"""A URL that answered as a feed or sitemap is a hub whatever its address:
the master keeps that in its revisit table (frontier.db), across restarts."""

from __future__ import annotations

from pathlib import Path

from nadird.common.urls import fingerprint
from nadird.config import config_from_dict
from nadird.master.frontier.admission import priority
from nadird.master.frontier.queues import Frontier
from nadird.master.revisits.scheduler import Revisits
from nadird.master.state.frontier_db import FrontierDB
from nadird.master.state.revisit_db import HUB_LEARNED, Entry
from nadird.protocol.messages import PageResult

EXPORT = "http://news.test/export?id=3"  # no feed's address
ARTICLE = "http://news.test/2026/budget"
FEEDS = {"revisit": {"adaptive": {"min": "10s", "max": "1h", "initial": "10s"}}}


class Wall:
    now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def _open(path: Path, wall: Wall, feeds: object = FEEDS) -> tuple[Revisits, FrontierDB]:
    jobs = config_from_dict({"jobs": {"news": {"feeds": feeds}}}, "t.yaml").jobs
    db = FrontierDB(path)
    return Revisits(db.revisits, Frontier(db), dict(jobs), wall=wall), db


def _page(url: str, feed: bool, status: int = 200) -> PageResult:
    data: dict[str, object] = {"_feed": {"kind": "rss", "entries": 1}} if feed else {}
    return PageResult(
        url=url, fp=fingerprint(url), final_url=url, status=status, fetched_at=0.0,
        depth=1, signature="s1", data=data,
    )  # fmt: skip


def _fetch(revisits: Revisits, page: PageResult) -> Entry:
    revisits.on_page(page, "news")
    revisits.settle([page.fp])
    entry = revisits.table.get(page.fp)
    assert entry is not None
    return entry


def test_a_feed_at_any_address_is_revisited_as_a_hub_after_a_restart(tmp_path: Path) -> None:
    wall = Wall()
    revisits, db = _open(tmp_path / "f.db", wall)
    feed = _fetch(revisits, _page(EXPORT, feed=True))
    article = _fetch(revisits, _page(ARTICLE, feed=False))
    assert feed.hub and feed.next_due == wall.now + 10  # the hubs' first interval
    assert feed.plan_rule == 0  # the hubs' group: on its own estimate, not the plan's
    assert not article.hub and article.next_due is None  # articles: fetched once
    db.close()

    wall.now += 10
    revisits, db = _open(tmp_path / "f.db", wall)  # a restarted master
    assert revisits.scan() == 1  # the feed is due, under its hub schedule
    job = revisits.jobs["news"]
    assert priority(job, 1, EXPORT, hub=True) > priority(job, 1, ARTICLE)
    again = _fetch(revisits, _page(EXPORT, feed=False, status=304))
    assert again.hub and again.next_due is not None  # a 304 keeps what it was
    db.close()


def test_a_hub_keeps_its_schedule_when_the_policy_changes(tmp_path: Path) -> None:
    wall = Wall()
    revisits, db = _open(tmp_path / "f.db", wall)
    _fetch(revisits, _page(EXPORT, feed=True))
    db.close()
    slower = {"revisit": {"every": "5m"}}
    revisits, db = _open(tmp_path / "f.db", wall, slower)
    while revisits.rescheduling:
        revisits.tick(60.0)
    entry = revisits.table.get(fingerprint(EXPORT))
    assert entry is not None and entry.hub and entry.next_due == wall.now + 300
    db.close()


def test_a_hub_that_stops_answering_as_a_feed_is_an_article_again(tmp_path: Path) -> None:
    wall = Wall()
    revisits, _ = _open(tmp_path / "f.db", wall)
    _fetch(revisits, _page(EXPORT, feed=True))
    wall.now += 10
    entry = _fetch(revisits, _page(EXPORT, feed=False))  # now an HTML page
    assert not entry.hub and entry.next_due is None


SECTION = "http://news.test/world/latest"


def _learn(revisits: Revisits, url: str, articles: int, status: int = 200) -> Entry:
    page = _page(url, feed=False, status=status)
    if status == 200:
        page.links = [f"{url}/a{k}" for k in range(articles + 1)]
    revisits.on_page(page, "news")
    if status == 200:
        revisits.found_articles("news", [(page.fp, articles)])
    revisits.settle([page.fp])
    entry = revisits.table.get(page.fp)
    assert entry is not None
    return entry


def test_a_page_that_finds_new_articles_is_a_hub_until_it_stops(tmp_path: Path) -> None:
    wall = Wall()
    revisits, _ = _open(tmp_path / "f.db", wall, {**FEEDS, "learn": 3, "forget": 2})
    assert _learn(revisits, ARTICLE, 2).next_due is None  # too few: an article, fetched once
    entry = _learn(revisits, SECTION, 3)
    assert entry.hub == HUB_LEARNED and entry.next_due == wall.now + 10
    assert entry.plan_rule == 0  # on the hubs' own estimate
    wall.now += 10
    assert _learn(revisits, SECTION, 0).hub == HUB_LEARNED  # one idle check: kept
    wall.now += 10
    assert _learn(revisits, SECTION, 1).next_due is not None  # it found one: idle count reset
    wall.now += 10
    assert _learn(revisits, SECTION, 0, status=304).hub == HUB_LEARNED
    wall.now += 10
    entry = _learn(revisits, SECTION, 0)  # two idle checks in a row: a page again
    assert entry.hub == 0 and entry.next_due is None and entry.plan_rule is None
    assert (revisits.hubs.learned, revisits.hubs.forgotten) == (1, 1)


def test_archive_pages_and_jobs_that_do_not_learn_make_no_hub(tmp_path: Path) -> None:
    wall = Wall()
    revisits, _ = _open(tmp_path / "f.db", wall, {**FEEDS, "learn": 0})
    assert _learn(revisits, SECTION, 50).hub == 0
    revisits, _ = _open(tmp_path / "g.db", wall)
    assert _learn(revisits, "http://news.test/archive?page=2", 50).hub == 0


def test_an_article_is_checked_again_once_after_recheck(tmp_path: Path) -> None:
    wall = Wall()
    revisits, _ = _open(tmp_path / "f.db", wall, {**FEEDS, "recheck": "1h"})
    first = _fetch(revisits, _page(ARTICLE, feed=False))
    assert first.next_due == wall.now + 3600  # once, for corrections
    assert _fetch(revisits, _page("http://news.test/tag/world", feed=False)).next_due is None
    wall.now += 3600
    assert revisits.scan() == 1
    job = revisits.jobs["news"]
    # Queued after new articles: it ranks as a listing page does.
    assert priority(job, 1, ARTICLE, known=True) < priority(job, 1, ARTICLE)
    assert _fetch(revisits, _page(ARTICLE, feed=False)).next_due is None  # not a third time
    never, _ = _open(tmp_path / "g.db", wall)  # the default: never
    assert _fetch(never, _page(ARTICLE, feed=False)).next_due is None


def test_a_learned_hubs_idle_checks_survive_a_restart(tmp_path: Path) -> None:
    wall = Wall()
    spec = {**FEEDS, "learn": 3, "forget": 2}
    revisits, db = _open(tmp_path / "f.db", wall, spec)
    _learn(revisits, SECTION, 3)
    wall.now += 10
    assert _learn(revisits, SECTION, 0).hub_idle == 1
    db.close()
    revisits, db = _open(tmp_path / "f.db", wall, spec)  # a restarted master
    wall.now += 10
    entry = _learn(revisits, SECTION, 0)  # the second idle check in a row
    assert entry.hub == 0 and entry.next_due is None
    db.close()
