"""queue.via: the page whose link admitted a URL, kept from admission to the
archive; a schema 4 frontier.db (without the column) opens and keeps its rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from nadird.common.urls import fingerprint
from nadird.job.spec import Job
from nadird.master.frontier.admission import Admission, links_of
from nadird.master.frontier.queues import Frontier
from nadird.master.frontier.seen import SeenSet
from nadird.master.row import VIA_SEED
from nadird.master.state.frontier_db import FrontierDB
from nadird.protocol.messages import PageResult


def admission(path: Path) -> Admission:
    return Admission(SeenSet(1000, 0.001), Frontier(FrontierDB(path)), {"j": Job(name="j")})


def queued(db: FrontierDB) -> dict[str, tuple[int, bytes]]:
    """url -> (row id, fingerprint) of every queued URL."""
    return {url: (i, fp) for i, fp, url in db._db.execute("SELECT id, fp, url FROM queue")}


def page_with_links(
    url: str, final_url: str, links: list[str], link_vias: list[str] | None = None
) -> PageResult:
    return PageResult(
        url=url,
        final_url=final_url,
        fp=fingerprint(url),
        depth=0,
        status=200,
        fetched_at=1000.0,
        links=links,
        link_fps=[fingerprint(u) for u in links],
        link_vias=link_vias or [],
    )


def test_a_seed_is_led_by_seed_and_a_link_by_the_page_it_was_on(tmp_path: Path) -> None:
    adm = admission(tmp_path / "f.db")
    adm.admit("j", ["http://a.test/"], [fingerprint("http://a.test/")], 0)
    # The page redirected: its links were on the final page, which is their via;
    # a link its worker read from a sitemap names the sitemap.
    found = page_with_links(
        "http://a.test/",
        "http://a.test/home",
        ["http://a.test/x", "http://a.test/listed"],
        ["", "http://a.test/sitemap.xml"],
    )
    adm.admit_many("j", [links_of(found)])
    db = adm.frontier.db
    rows = queued(db)
    vias = db.vias(list(rows.values()))
    assert {url: vias[i] for url, (i, _) in rows.items()} == {
        "http://a.test/": VIA_SEED,
        "http://a.test/x": "http://a.test/home",
        "http://a.test/listed": "http://a.test/sitemap.xml",
    }
    # A row id with another URL's fingerprint (a worker's echo is not trusted).
    (seed_id, _), (_, other_fp) = rows["http://a.test/"], rows["http://a.test/x"]
    assert db.vias([(seed_id, other_fp)]) == {}


def test_a_schema_4_file_gains_the_column_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "f.db"
    adm = admission(path)
    adm.admit("j", ["http://a.test/old"], [fingerprint("http://a.test/old")], 0)
    adm.frontier.db.close()
    raw = sqlite3.connect(path)
    raw.executescript(
        "ALTER TABLE queue DROP COLUMN via; UPDATE meta SET value='4' WHERE key='schema_version';"
    )
    raw.close()
    migrated = admission(path)
    db = migrated.frontier.db
    assert db.meta("schema_version") == "5"
    migrated.admit("j", ["http://a.test/new"], [fingerprint("http://a.test/new")], 0)
    rows = queued(db)
    vias = db.vias(list(rows.values()))
    assert vias[rows["http://a.test/old"][0]] is None  # not known: admitted before
    assert vias[rows["http://a.test/new"][0]] == VIA_SEED
    db.close()
    assert FrontierDB(path).meta("schema_version") == "5"  # opens again as it is
