"""The master's revisit bookkeeping on a real frontier.db, on a fake clock."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import lxml.html
import pytest

from nadird.common.errors import ConfigError
from nadird.common.urls import fingerprint
from nadird.config import config_from_dict
from nadird.master.frontier.queues import Frontier
from nadird.master.revisits.clock import OFFSET_ENV, START_ENV, revisit_wall
from nadird.master.revisits.scheduler import MAX_PER_SCAN, MIN_SCAN_GAP, Revisits
from nadird.master.state.frontier_db import FrontierDB
from nadird.protocol.messages import Bag, PageResult
from nadird.store.history import Version, diffs
from nadird.worker.parse.signature import fields_signature, text_signature

DAY = 86400.0


class Wall:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def _revisits(path: Path, wall: Wall, **job: object) -> tuple[Revisits, FrontierDB]:
    jobs = config_from_dict({"jobs": {"shop": job}}, "t.yaml").jobs
    db = FrontierDB(path)
    frontier = Frontier(db)
    return Revisits(db.revisits, frontier, dict(jobs), wall=wall), db


def _page(url: str, status: int = 200, signature: str | None = "s1", etag: str = "") -> PageResult:
    return PageResult(
        url=url,
        fp=fingerprint(url),
        final_url=url,
        status=status,
        fetched_at=0.0,
        depth=1,
        signature=signature,
        etag=etag,
    )


def _fetch(revisits: Revisits, page: PageResult) -> bool:
    keep = revisits.on_page(page, "shop")
    revisits.settle([page.fp])
    return keep


def test_fetches_are_scheduled_and_changes_counted(tmp_path: Path) -> None:
    wall = Wall()
    revisits, _ = _revisits(tmp_path / "f.db", wall, revisit={"every": "1h"})
    assert revisits.active  # a master with this job is never complete
    url = "http://shop.test/a"
    assert _fetch(revisits, _page(url, signature="s1", etag='"v1"'))
    entry = revisits.table.get(fingerprint(url))
    assert entry is not None and entry.next_due == wall.now + 3600 and entry.checks == 0
    wall.now += 3600
    _fetch(revisits, _page(url, signature="s1"))
    wall.now += 3600
    _fetch(revisits, _page(url, signature="s2"))
    entry = revisits.table.get(fingerprint(url))
    assert entry is not None and (entry.checks, entry.changes) == (2, 1)
    assert entry.signature == "s2" and entry.last_change == wall.now
    assert (revisits.checks, revisits.changes) == (2, 1)


def test_a_304_keeps_the_record_signature_and_validators(tmp_path: Path) -> None:
    wall = Wall()
    revisits, _ = _revisits(tmp_path / "f.db", wall, revisit={"every": "1h"})
    url = "http://shop.test/a"
    assert _fetch(revisits, _page(url, signature="s1", etag='"v1"'))
    wall.now += 3600
    assert not _fetch(revisits, _page(url, status=304, signature=None))  # no store write
    entry = revisits.table.get(fingerprint(url))
    assert entry is not None and entry.signature == "s1" and entry.etag == '"v1"'
    assert entry.next_due == wall.now + 3600 and revisits.not_modified == 1
    assert revisits.validators("shop", [fingerprint(url)]) == [['"v1"', ""]]
    # A 304 for a URL never fetched (a server that answers 304 to anything) is stored.
    assert revisits.on_page(_page("http://shop.test/new", status=304), "shop")


def test_a_clock_jump_is_spread_over_scans_not_queued_at_once(tmp_path: Path) -> None:
    wall = Wall()
    revisits, _ = _revisits(tmp_path / "f.db", wall, revisit={"every": "1h"})
    count = 2 * MAX_PER_SCAN + 500
    for i in range(count):
        _fetch(revisits, _page(f"http://shop.test/p{i}"))
    assert revisits.scan() == 0  # nothing due yet
    wall.now += 30 * DAY  # the clock jumps (or the master was down a month)
    assert [revisits.scan() for _ in range(4)] == [MAX_PER_SCAN, MAX_PER_SCAN, 500, 0]
    assert revisits.frontier.queued == count  # each URL queued once


def test_the_next_scan_waits_for_the_first_due_row_not_a_whole_tick(tmp_path: Path) -> None:
    wall = Wall()
    revisits, _ = _revisits(tmp_path / "f.db", wall, revisit={"every": "1s"})
    assert revisits.next_scan_in(1.0) == 1.0  # nothing scheduled: the idle tick
    _fetch(revisits, _page("http://shop.test/a"))
    wall.now += 0.7
    assert revisits.next_scan_in(1.0) == pytest.approx(0.3)  # not 1.0: due at 1 s, not 1.7 s
    wall.now += 0.3
    assert revisits.next_scan_in(1.0) == MIN_SCAN_GAP and revisits.scan() == 1
    assert revisits.next_scan_in(1.0) == 1.0  # queued: nothing else waits


def test_a_backlog_is_scanned_once_per_tick(tmp_path: Path) -> None:
    wall = Wall()
    revisits, _ = _revisits(tmp_path / "f.db", wall, revisit={"every": "1h"})
    for i in range(MAX_PER_SCAN + 1):
        _fetch(revisits, _page(f"http://shop.test/p{i}"))
    wall.now += DAY
    assert revisits.scan() == MAX_PER_SCAN
    assert revisits.next_scan_in(1.0) == 1.0  # one due row left, but the scan was full
    assert revisits.scan() == 1 and revisits.next_scan_in(1.0) == 1.0


def test_rows_are_written_only_when_settled(tmp_path: Path) -> None:
    wall = Wall()
    revisits, db = _revisits(tmp_path / "f.db", wall, revisit={"every": "1h"})
    page = _page("http://shop.test/a")
    revisits.on_page(page, "shop")
    assert revisits.table.get(page.fp) is None  # its queue row has not left yet
    revisits.settle([page.fp])
    db.commit()
    db.close()
    again = FrontierDB(tmp_path / "f.db")
    assert again.revisits.get(page.fp) is not None


def test_expire_makes_a_rediscovered_url_due(tmp_path: Path) -> None:
    wall = Wall()
    revisits, _ = _revisits(tmp_path / "f.db", wall, expire="30d")
    # Without a schedule the crawl may still complete; rediscovery is watched.
    assert revisits.scanning and not revisits.active
    old, recent = _page("http://shop.test/old"), _page("http://shop.test/recent")
    _fetch(revisits, old)
    wall.now += 20 * DAY
    _fetch(revisits, recent)
    assert revisits.table.get(old.fp).next_due is None  # type: ignore[union-attr]
    assert revisits.scan() == 0
    wall.now += 11 * DAY
    assert revisits.found("shop", [old.fp, recent.fp, fingerprint("http://shop.test/x")]) == 1
    assert revisits.scan() == 1 and revisits.frontier.queued == 1


def test_bag_validators_must_pair_with_urls() -> None:
    fp = fingerprint("http://a.test/")

    def bag(validators: list[list[str]]) -> Bag:
        return Bag(
            "l", 1, "a.test", {}, ["http://a.test/"], [fp], [0], 0.0, 1, 1.0, validators=validators
        )

    assert bag([['"e"', ""]]).validators == [['"e"', ""]]
    assert bag([]).validators == []  # a bag without revisits
    for bad in ([["e", ""], ["f", ""]], [["e"]], [["x" * 2000, ""]]):
        with pytest.raises(ValueError):
            bag(bad)


def test_signatures_follow_fields_or_text_without_ignored_parts() -> None:
    assert fields_signature({"a": 1, "b": "x"}) == fields_signature({"b": "x", "a": 1})
    assert fields_signature({"a": 1}) != fields_signature({"a": 2})

    def doc(clock: str, price: str) -> lxml.html.HtmlElement:
        html = f"<html><body><p class=clock>{clock}</p><b>{price}</b><script>x={clock}</script>"
        return lxml.html.document_fromstring(html + "</body></html>")

    assert text_signature(doc("10:00", "9"), [".clock"]) == text_signature(
        doc("10:01", "9"), [".clock"]
    )
    assert text_signature(doc("10:00", "9"), []) != text_signature(doc("10:01", "9"), [])
    assert text_signature(doc("10:00", "9"), [".clock"]) != text_signature(
        doc("10:00", "8"), [".clock"]
    )


def test_diffs_pair_each_version_with_the_one_before() -> None:
    versions = [
        Version("http://a/1", "shop", 10.0, "s1", {"price": 299, "title": "K"}),
        Version("http://a/1", "shop", 20.0, "s2", {"price": 259, "title": "K"}),
        Version("http://a/1", "shop", 30.0, "s3", {"price": 259, "title": "K2", "new": 1}),
        Version("http://a/2", "shop", 15.0, "t1", {"price": 5}),
    ]
    found = list(diffs(versions))
    assert [(d["url"], d["time"], d["changes"]) for d in found] == [
        ("http://a/1", 20.0, {"price": {"old": 299, "new": 259}}),
        ("http://a/1", 30.0, {"title": {"old": "K", "new": "K2"}, "new": {"old": None, "new": 1}}),
    ]
    assert [d["time"] for d in diffs(versions, since=25.0)] == [30.0]


def test_a_bad_clock_offset_is_a_config_error() -> None:
    assert revisit_wall({})() == pytest.approx(time.time(), abs=1)
    assert revisit_wall({OFFSET_ENV: "3600"})() == pytest.approx(time.time() + 3600, abs=1)
    for bad in ("soon", "nan", "inf"):
        with pytest.raises(ConfigError, match=OFFSET_ENV):
            revisit_wall({OFFSET_ENV: bad})
        with pytest.raises(ConfigError, match=START_ENV):
            revisit_wall({START_ENV: bad})


def test_a_clock_start_reads_that_time_when_the_schedule_is_built() -> None:
    virtual = 1_800_000_000.0
    assert revisit_wall({START_ENV: repr(virtual)})() == pytest.approx(virtual, abs=1)
    with pytest.raises(ConfigError, match="not both"):
        revisit_wall({START_ENV: repr(virtual), OFFSET_ENV: "10"})


class Ticks:
    """A monotonic clock that moves 10 ms each time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 0.01
        return self.now


def test_the_due_count_is_reused_for_twenty_times_its_cost(tmp_path: Path) -> None:
    wall, ticks = Wall(), Ticks()
    jobs = config_from_dict({"jobs": {"shop": {"revisit": {"every": "1h"}}}}, "t.yaml").jobs
    db = FrontierDB(tmp_path / "f.db")
    revisits = Revisits(db.revisits, Frontier(db), dict(jobs), wall=wall, clock=ticks)
    _fetch(revisits, _page("http://shop.test/a"))
    assert revisits.status()["revisit_due"] == 0  # counted: it "took" 10 ms
    wall.now += 3600
    assert revisits.status()["revisit_due"] == 0  # within 200 ms of that count
    ticks.now += 0.2
    assert revisits.status()["revisit_due"] == 1


def _vm_steps(db: FrontierDB, action: Any) -> int:
    """SQLite virtual-machine instructions `action` runs, in hundreds."""
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    db._db.set_progress_handler(count, 100)
    try:
        action()
    finally:
        db._db.set_progress_handler(None, 0)
    return steps[0]


def test_a_scan_reads_what_is_due_and_waiting_not_what_is_known_or_queued(
    tmp_path: Path,
) -> None:
    wall = Wall()
    revisits, db = _revisits(tmp_path / "f.db", wall, revisit={"every": "1h"})
    for at in range(0, 3000, 500):
        pages = [_page(f"http://shop.test/{i}") for i in range(at, at + 500)]
        for page in pages:
            revisits.on_page(page, "shop")
        revisits.settle([p.fp for p in pages])
    db.commit()
    nothing_due = _vm_steps(db, revisits.scan)
    wall.now += 3600  # all 3,000 due: three scans queue them
    assert [revisits.scan() for _ in range(4)] == [MAX_PER_SCAN] * 3 + [0]
    # 3,000 due and queued (waiting for their fetch): not walked again.
    all_queued = _vm_steps(db, revisits.scan)
    assert nothing_due < 5 and all_queued < 5, (nothing_due, all_queued)
    assert revisits.table.count_due(wall.now) == 3000


def test_an_older_file_gets_the_due_index_on_queued_and_due_time(tmp_path: Path) -> None:
    path = tmp_path / "f.db"
    FrontierDB(path).close()
    with sqlite3.connect(path) as old:
        old.execute("DROP INDEX revisits_waiting")
        old.execute("CREATE INDEX revisits_due ON revisits (next_due)")
    FrontierDB(path).close()
    with sqlite3.connect(path) as db:
        names = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert "revisits_waiting" in names and "revisits_due" not in names
