"""A feeds job's results through the master's core (no sockets, a real
frontier.db): the articles a feed names are noted once admitted and filled
and counted when they come in, and a config reload that turns `feeds:` on
is followed from the next result."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.core_helpers import A_URLS, T0, bags, make_core, page, register, results

from nadird.common.typecheck import build
from nadird.common.urls import fingerprint
from nadird.job.spec import Job
from nadird.master.core import MasterCore
from nadird.protocol.messages import BagDone

ARTICLE = "http://a.test/2026/12/budget"


@pytest.fixture
def core(tmp_path: Path) -> Iterator[MasterCore]:
    yield from make_core(tmp_path)


def _feeds_on(core: MasterCore) -> None:
    jobs = {"default": build(Job, {"feeds": True, "delay": 0.0})}
    core.apply_config(dataclasses.replace(core.config, jobs=jobs))


def test_a_reload_that_turns_feeds_on_is_followed(core: MasterCore) -> None:
    _feeds_on(core)  # the jobs' mapping is a new one: every part must see it
    session = register(core, "w1")
    bag = bags(core)["a.test"]
    feed_data = {
        "_feed": {"kind": "rss", "entries": 1, "no_url": 2},
        "entries": [{"url": ARTICLE, "title": "The budget vote"}],
    }
    feed = page(bag.urls[0], data=feed_data, links=[ARTICLE], link_fps=[fingerprint(ARTICLE)])
    others = [page(u) for u in bag.urls[1:]]
    core.on_results(results(bag, "w1", session, [feed, *others]), T0)
    core.on_control(b"w1", BagDone(node="w1", lease=bag.lease, epoch=bag.epoch), T0)
    core.frontier.db.commit()
    again = bags(core, T0 + 10)["a.test"]
    assert again.urls == [ARTICLE]
    article = page(ARTICLE, data={}, depth=1)
    [record] = core.on_results(results(again, "w1", session, [article]), T0 + 10)
    assert record.data == {"title": "The budget vote", "_from_feed": ["title"]}
    status = core.discovery.status()["default"]
    assert status["failed_entries"] == {"no_url": 2}
    # The feed's own URL (A_URLS[0]) is not an article; the two others are links.
    assert status["articles"] == {"feed": 1, "link": len(A_URLS) - 1}
