"""ETag health across restarts: hosts marked broken or trusted, and the
failures counted so far, are kept in frontier.db (etag_db.py); real SQLite,
fake clocks."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from test_revisit_plan_master import HOUR, Clocks, _fetch, _page, _revisits

from nadird.common.urls import fingerprint
from nadird.master.revisits.etag_health import BROKEN_AFTER
from nadird.master.revisits.scheduler import Revisits

LM = "Tue, 01 Dec 2026 10:00:00 GMT"
ROTATING = [f"http://rot.test/{i}" for i in range(2)]
GOOD = "http://good.test/a"
HALF = "http://half.test/a"  # one failure short of broken at the restart


def _restart(revisits: Revisits, path: Path, clocks: Clocks) -> Revisits:
    assert revisits.table._tx.commit()
    revisits.table._db.close()
    return _revisits(path, clocks, {"every": "1h"})


def _learn(revisits: Revisits, clocks: Clocks) -> None:
    for n in range(BROKEN_AFTER):
        for url in ROTATING:  # a new ETag every time, content the same
            _fetch(revisits, _page(url, "same", etag=f'"{n}"', lm=LM))
        # Its first fetch sent no ETag: BROKEN_AFTER - 1 failures in all.
        _fetch(revisits, _page(HALF, "same", etag=f'"{n}"', lm=LM))
        _fetch(revisits, _page(GOOD, "same", etag='"g"', lm=LM))
        clocks.advance(HOUR)
    _fetch(revisits, _page(GOOD, "", status=304))


def _etags_sent(revisits: Revisits, urls: list[str]) -> list[str]:
    return [pair[0] for pair in revisits.validators("shop", [fingerprint(u) for u in urls])]


def test_broken_and_trusted_hosts_stay_so_after_a_restart(tmp_path: Path) -> None:
    clocks = Clocks()
    path = tmp_path / "f.db"
    revisits = _revisits(path, clocks, {"every": "1h"})
    _learn(revisits, clocks)
    assert revisits.etags.broken == {"rot.test"}
    again = _restart(revisits, path, clocks)
    assert again.etags.broken == {"rot.test"}
    assert again.status()["revisit_etag_ignored_hosts"] == 1
    assert _etags_sent(again, [*ROTATING, GOOD, HALF]) == ["", "", '"g"', f'"{BROKEN_AFTER - 1}"']
    # The failures counted before go on: one more makes half.test broken.
    _fetch(again, _page(HALF, "same", etag='"new"', lm=LM))
    assert again.etags.broken == {"rot.test", "half.test"}
    # The trusted host stays trusted although its pages now fail, restart or not.
    for n in range(2 * BROKEN_AFTER):
        _fetch(again, _page(GOOD, "same", etag=f'"x{n}"', lm=LM))
    third = _restart(again, path, clocks)
    assert third.etags.broken == {"rot.test", "half.test"}
    assert _etags_sent(third, [GOOD]) == [f'"x{2 * BROKEN_AFTER - 1}"']


def test_the_host_table_is_small_and_written_with_the_schedule(tmp_path: Path) -> None:
    clocks = Clocks()
    path = tmp_path / "f.db"
    revisits = _revisits(path, clocks, {"every": "1h"})
    _learn(revisits, clocks)
    with sqlite3.connect(path) as other:  # nothing committed yet: nothing seen
        assert other.execute("SELECT count(*) FROM etag_hosts").fetchone() == (0,)
    assert revisits.table._tx.commit()
    with sqlite3.connect(path) as other:
        rows = dict(((h, (s, f)) for h, s, f in other.execute("SELECT * FROM etag_hosts")))
    other.close()
    assert rows == {
        "rot.test": ("broken", BROKEN_AFTER),
        "good.test": ("trusted", 0),
        "half.test": ("counting", BROKEN_AFTER - 1),
    }
