"""The durable plan counts (revisit_counts.py) on a real frontier.db: equal to
the GROUP BY over the schedule after any mix of writes, built once for an
older file, and what a master start reads."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from structlog.testing import capture_logs

from nadird.common.urls import fingerprint
from nadird.master.state.frontier_db import FrontierDB
from nadird.master.state.revisit_counts import group_counts, read_counts
from nadird.master.state.revisit_db import Entry
from nadird.revisit.estimate import ChangeStats

DOMAINS = ("a.test", "b.test", "c.test")
JOBS = ("shop", "news")
RULES = (None, -1, 0, 2)  # None: not adaptive
CLASSES = (None, -384, -1, 0, 17)  # None: no rate known yet


def _entry(i: int, rng: random.Random) -> Entry:
    url = f"http://{rng.choice(DOMAINS)}/p{i}"
    return Entry(
        fp=fingerprint(url),
        url=url,
        job=rng.choice(JOBS),
        domain=rng.choice(DOMAINS),
        depth=1,
        next_due=1000.0 + i,
        queued=False,
        interval=60.0,
        last_fetch=900.0,
        last_change=None,
        checks=0,
        changes=0,
        stats=ChangeStats(0.0, 0.0, 0.0, 0.0, 0.0),
        etag="",
        last_modified="",
        signature=None,
        plan_rule=rng.choice(RULES),
        plan_class=rng.choice(CLASSES),
    )


def _random_writes(db: FrontierDB, rng: random.Random, steps: int) -> None:
    """Inserts, rewrites that move a row's group (or keep it), plain updates,
    direct group changes and deletes, committed now and then."""
    table, raw = db.revisits, db._db
    known: dict[bytes, Entry] = {}
    for i in range(steps):
        action = rng.random()
        if action < 0.4 or not known:
            batch = [_entry(i * 10 + k, rng) for k in range(rng.randint(1, 5))]
            table.put_many(batch)
            known.update((e.fp, e) for e in batch)
        elif action < 0.65:  # a fetch writes the row again, in a new group or the same
            old = known[rng.choice(list(known))]
            moved = _entry(i, rng) if rng.random() < 0.7 else old
            moved.fp, moved.url = old.fp, old.url
            table.put_many([moved])
        elif action < 0.75:
            table.mark_queued([rng.choice(list(known))])
        elif action < 0.85:
            fp = rng.choice(list(known))
            db._tx.write(
                "UPDATE revisits SET plan_class = ?, domain = ? WHERE fp = ?",
                (rng.choice(CLASSES), rng.choice(DOMAINS), fp),
            )
        else:
            fp = rng.choice(list(known))
            db._tx.write("DELETE FROM revisits WHERE fp = ?", (fp,))
            del known[fp]
        if rng.random() < 0.1:
            assert db.commit()
    assert set(read_counts(raw)) == set(group_counts(raw))


def test_the_counts_equal_the_group_by_after_random_writes(tmp_path: Path) -> None:
    for seed in range(5):
        db = FrontierDB(tmp_path / f"f{seed}.db")
        _random_writes(db, random.Random(seed), 400)
        counts = read_counts(db._db)
        assert counts and any(c is None for _, _, _, c, _ in counts)  # both kinds met
        assert all(pages > 0 for *_, pages in counts)  # a group at zero goes
        assert db.close()
        again = FrontierDB(tmp_path / f"f{seed}.db")
        assert set(again.revisits.plan_counts()) == set(counts)
        again.close()


def test_counts_roll_back_with_their_rows(tmp_path: Path) -> None:
    db = FrontierDB(tmp_path / "f.db")
    rng = random.Random(1)
    first = [_entry(i, rng) for i in range(20)]
    for e in first:
        e.plan_rule = -1
    db.revisits.put_many(first)
    assert db.commit()
    committed = set(read_counts(db._db))
    db.revisits.put_many([_entry(100 + i, rng) for i in range(20)])
    db._db.execute("ROLLBACK")  # what a crash before the commit leaves
    db._tx._redo.clear()
    assert set(read_counts(db._db)) == committed == set(group_counts(db._db))
    db.close()


def _old_format(path: Path, rows: int) -> list[tuple[str, str, int, int | None, int]]:
    """A frontier.db as a master before durable counts left it."""
    db = FrontierDB(path)
    rng = random.Random(7)
    db.revisits.put_many(_entry(i, rng) for i in range(rows))
    assert db.close()
    with sqlite3.connect(path) as raw:
        raw.executescript(
            "DROP TRIGGER revisit_counts_insert; DROP TRIGGER revisit_counts_delete; "
            "DROP TRIGGER revisit_counts_update; DROP TABLE revisit_plan_counts;"
        )
        expected = group_counts(raw)
    raw.close()
    return expected


def test_an_older_file_gets_its_counts_once(tmp_path: Path) -> None:
    path = tmp_path / "f.db"
    expected = _old_format(path, 300)
    with capture_logs() as logs:
        db = FrontierDB(path)
    built = [e for e in logs if e["event"] == "revisit_plan_counts_built"]
    assert len(built) == 1 and built[0]["groups"] == len(expected)
    assert set(db.revisits.plan_counts()) == set(expected)
    # A mark only the table has: a second open must not count again.
    db._db.execute("UPDATE revisit_plan_counts SET pages = pages + 1000")
    db.close()
    with capture_logs() as logs:
        again = FrontierDB(path)
    assert not [e for e in logs if e["event"] == "revisit_plan_counts_built"]
    assert all(pages > 1000 for *_, pages in again.revisits.plan_counts())
    again.close()


def test_a_missing_trigger_has_the_counts_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "f.db"
    db = FrontierDB(path)
    rng = random.Random(3)
    db.revisits.put_many(_entry(i, rng) for i in range(50))
    db.close()
    with sqlite3.connect(path) as raw:
        raw.executescript(
            "DROP TRIGGER revisit_counts_delete; UPDATE revisit_plan_counts SET pages = 0;"
        )
    raw.close()
    again = FrontierDB(path)  # counts no longer trustworthy: taken again from the rows
    assert set(again.revisits.plan_counts()) == set(group_counts(again._db))
    again._tx.write("DELETE FROM revisits")  # and every trigger is back
    assert again.revisits.plan_counts() == []
    again.close()
