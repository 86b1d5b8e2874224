from collections.abc import Sequence
from pathlib import Path

import pytest

from nadird.master.frontier.queues import Caps, Frontier
from nadird.master.leasing.leases import Holder, LeaseTable
from nadird.master.row import Row
from nadird.master.state.frontier_db import FrontierDB


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def rows(
    n: int, domain: str = "a.test", job: str = "j", start: int = 0, prio: int = 0
) -> list[Row]:
    return [
        Row(
            f"http://{domain}/{i}",
            f"{domain}{i}".encode().ljust(16, b".")[:16],
            1,
            job,
            prio,
            domain,
        )
        for i in range(start, start + n)
    ]


@pytest.fixture
def db(tmp_path: Path) -> FrontierDB:
    return FrontierDB(tmp_path / "frontier.db")


@pytest.fixture
def clock() -> Clock:
    return Clock()


def frontier(db: FrontierDB, clock: Clock, caps: Caps | None = None) -> Frontier:
    return Frontier(db, caps or Caps(), clock=clock, wall=clock)


def test_ready_domains_come_out_by_next_allowed_time(db: FrontierDB, clock: Clock) -> None:
    f = frontier(db, clock)
    f.admit(rows(1, "a.test") + rows(1, "b.test"))
    a = f.pop_ready(clock.t)
    assert a is not None
    taken = f.take(a, 5)
    f.release(a.name, clock.t + 5.0, taken)  # a must rest 5 s
    b = f.pop_ready(clock.t)
    assert b is not None and b.name == "b.test"
    assert f.pop_ready(clock.t) is None
    assert f.next_ready_at() == clock.t + 5.0
    assert f.pop_ready(clock.t + 5.0).name == "a.test"  # type: ignore[union-attr]


def test_leased_domain_is_never_ready_and_returned_urls_come_first(
    db: FrontierDB, clock: Clock
) -> None:
    f = frontier(db, clock)
    f.admit(rows(5))
    ds = f.pop_ready(clock.t)
    assert ds is not None
    bag = f.take(ds, 2)
    assert [r.url for r in bag] == ["http://a.test/0", "http://a.test/1"]
    f.admit(rows(1, start=99))  # new URLs while leased
    assert f.pop_ready(clock.t + 100) is None
    f.acked(bag[0].fp)
    f.release("a.test", clock.t, bag[1:])
    ds = f.pop_ready(clock.t)
    assert ds is not None
    # The acked URL is settling (not yet stored): never handed out again.
    assert [r.url for r in f.take(ds, 3)] == [
        "http://a.test/1",
        "http://a.test/2",
        "http://a.test/3",
    ]


def test_higher_priority_first_and_one_job_per_bag(db: FrontierDB, clock: Clock) -> None:
    f = frontier(db, clock)
    f.admit(rows(2, job="x", prio=1) + rows(2, job="y", start=5, prio=5))
    ds = f.pop_ready(clock.t)
    assert ds is not None
    bag = f.take(ds, 10)
    assert {r.job for r in bag} == {"y"}
    assert f.queued == 4


def test_urls_leave_only_when_durable(db: FrontierDB, clock: Clock) -> None:
    f = frontier(db, clock)
    f.admit(rows(3))
    ds = f.pop_ready(clock.t)
    assert ds is not None
    bag = f.take(ds, 3)
    for r in bag:
        f.acked(r.fp)
    f.release("a.test", clock.t)
    assert f.queued == 3 and db.total_rows() == 3
    f.durable([bag[0].fp, bag[1].fp])
    assert f.queued == 1 and db.total_rows() == 1
    f.durable([bag[2].fp, bag[2].fp])  # a replayed ack is harmless
    assert f.queued == 0 and db.total_rows() == 0


def test_late_results_settle_queued_urls_but_not_ones_out_again(
    db: FrontierDB, clock: Clock
) -> None:
    f = frontier(db, clock)
    f.admit(rows(4) + rows(2, "b.test"))
    ds = f.pop_ready(clock.t)
    assert ds is not None and ds.name == "a.test"
    first = f.take(ds, 4)
    f.release("a.test", clock.t, first)  # the lease expired: all four back
    again = f.take(ds, 2)  # two of them out in a new lease
    stranger = rows(1, "a.test", start=99)[0].fp  # never queued
    f.late("a.test", [(r.fp, 0) for r in first] + [(stranger, 0)])  # no row ids: searched
    f.durable([r.fp for r in first] + [stranger])
    # The two not re-leased leave; the re-leased two stay with their lease.
    assert f.queued == 4 and db.total_rows() == 4
    left = {url for _, _, url in _queued(db)}
    assert {r.url for r in again} <= left
    assert ds.out == 2 and ds.settling == 0


class CountingDB(FrontierDB):
    """The real database, counting the domain scans late results cost."""

    scans = 0

    def find(self, domain_id: int, fps: Sequence[bytes]) -> dict[bytes, int]:
        self.scans += 1
        return super().find(domain_id, fps)


def test_late_results_with_row_ids_need_no_search_and_stale_ids_are_not_trusted(
    tmp_path: Path, clock: Clock
) -> None:
    db = CountingDB(tmp_path / "f.db")
    f = frontier(db, clock)
    f.admit(rows(3))
    ds = f.pop_ready(clock.t)
    assert ds is not None
    bag = f.take(ds, 3)
    f.release("a.test", clock.t, bag)  # lease expired
    f.late("a.test", [(r.fp, r.id) for r in bag[:2]])
    assert db.scans == 0
    # A wrong id (another row's) is checked against the fingerprint, then searched.
    f.late("a.test", [(bag[2].fp, bag[0].id)])
    assert db.scans == 1
    f.durable([r.fp for r in bag])
    assert f.queued == 0 and db.total_rows() == 0


def _queued(db: FrontierDB) -> list[tuple[int, bytes, str]]:
    return db._db.execute("SELECT id, fp, url FROM queue").fetchall()


def test_schema_1_state_is_migrated_without_losing_rows(tmp_path: Path, clock: Clock) -> None:
    import sqlite3

    path = tmp_path / "old.db"
    db = FrontierDB(path)
    f = frontier(db, clock)
    f.admit(rows(3) + rows(2, "b.test"))
    db.close()
    # Turn it into what schema 1 wrote: the same table with a UNIQUE fingerprint.
    raw = sqlite3.connect(path)
    raw.executescript(
        """
        CREATE TABLE q1 AS SELECT * FROM queue;
        DROP TABLE queue;
        CREATE TABLE queue (id INTEGER PRIMARY KEY, domain_id INTEGER NOT NULL,
            priority INTEGER NOT NULL, fp BLOB NOT NULL UNIQUE, url TEXT NOT NULL,
            depth INTEGER NOT NULL, job TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
            not_before REAL NOT NULL DEFAULT 0, first_failed_at REAL, last_error TEXT);
        INSERT INTO queue SELECT id, domain_id, priority, fp, url, depth, job, attempts,
            not_before, first_failed_at, last_error FROM q1;
        DROP TABLE q1;
        UPDATE meta SET value='1' WHERE key='schema_version';
        """
    )
    raw.close()
    migrated = FrontierDB(path)
    indexes = [r[1] for r in migrated._db.execute("PRAGMA index_list(queue)")]
    assert indexes == ["queue_take"]
    again = frontier(migrated, clock)
    assert again.queued == 5
    taken = []
    while (ds := again.pop_ready(clock.t)) is not None:
        bag = again.take(ds, 10)
        taken += bag
        for r in bag:
            again.acked(r.fp)
        again.release(ds.name, clock.t)
    assert sorted(r.url for r in taken) == sorted(r.url for r in rows(3) + rows(2, "b.test"))
    again.durable([r.fp for r in taken])
    assert migrated.total_rows() == 0


def test_a_handed_over_url_keeps_its_new_job_across_a_restart_and_schema_2_migrates(
    tmp_path: Path, clock: Clock
) -> None:
    import sqlite3

    path = tmp_path / "f.db"
    db = FrontierDB(path)
    f = frontier(db, clock)
    f.admit(rows(2))
    ds = f.pop_ready(clock.t)
    assert ds is not None
    first, second = f.take(ds, 2)
    f.retry(first, 2, 0.0, "http: status 500")
    f.hand_over(first, "simple", "http: status 500")  # its tries ran out
    f.release(ds.name, clock.t, [second])
    db.close()
    reopened = FrontierDB(path)
    ds = frontier(reopened, clock).pop_ready(clock.t)
    assert ds is not None
    taken = {r.url: r for r in reopened.take(ds.id, ds.name, 10, clock.t)}
    handed = taken[first.url]
    assert (handed.job, handed.fallback_from, handed.attempts) == ("simple", "j", 0)
    assert (taken[second.url].job, taken[second.url].fallback_from) == ("j", None)
    reopened.close()
    # Schema 2 had no fallback_from column: it is added, the rows stay.
    raw = sqlite3.connect(path)
    raw.executescript(
        """
        ALTER TABLE queue DROP COLUMN fallback_from;
        UPDATE meta SET value='2' WHERE key='schema_version';
        """
    )
    raw.close()
    migrated = FrontierDB(path)
    assert migrated.meta("schema_version") == "5" and migrated.total_rows() == 2
    ds = frontier(migrated, clock).pop_ready(clock.t)
    assert ds is not None
    assert {r.fallback_from for r in migrated.take(ds.id, ds.name, 10, clock.t)} == {None}
    migrated.close()


def test_state_survives_reopening_and_every_row_is_available_again(
    tmp_path: Path, clock: Clock
) -> None:
    db = FrontierDB(tmp_path / "f.db")
    f = frontier(db, clock)
    f.admit(rows(4) + rows(2, "b.test"))
    ds = f.pop_ready(clock.t)
    assert ds is not None
    f.take(ds, 4)  # leased when the "crash" happens
    db.close()
    again = frontier(FrontierDB(tmp_path / "f.db"), clock)
    assert again.queued == 6
    seen = set()
    while (ds := again.pop_ready(clock.t)) is not None:
        seen |= {r.url for r in again.take(ds, 10)}
    assert len(seen) == 6


def test_retry_waits_and_dead_letters_leave_the_queue(db: FrontierDB, clock: Clock) -> None:
    f = frontier(db, clock)
    f.admit(rows(2))
    ds = f.pop_ready(clock.t)
    assert ds is not None
    first, second = f.take(ds, 2)
    f.retry(first, attempts=1, delay=30.0, error="timeout: slow")
    f.dead(second, "connect: refused", attempts=4)
    f.release("a.test", clock.t)
    assert f.queued == 1
    ds = f.pop_ready(clock.t)
    assert ds is not None
    assert f.take(ds, 5) == []  # the only URL waits for its retry time
    clock.t += 31
    ds = f.pop_ready(clock.t)
    assert ds is not None
    again = f.take(ds, 5)
    assert [(r.url, r.attempts) for r in again] == [(first.url, 1)]
    [letter] = db.dead_letters()
    assert (letter.url, letter.attempts, letter.error) == (second.url, 4, "connect: refused")


def test_requeued_dead_letters_come_back(db: FrontierDB, clock: Clock) -> None:
    f = frontier(db, clock)
    f.admit(rows(1))
    ds = f.pop_ready(clock.t)
    assert ds is not None
    [row] = f.take(ds, 1)
    f.dead(row, "http: status 500", attempts=4)
    f.release("a.test", clock.t)
    assert f.queued == 0
    assert db.mark_requeue([row.fp]) == 1
    assert f.requeue_dead() == 1
    assert db.dead_letters() == []
    ds = f.pop_ready(clock.t + 2)
    assert ds is not None
    assert [r.attempts for r in f.take(ds, 1)] == [0]


def test_domain_cap_evicts_lowest_priority_into_overflow(db: FrontierDB, clock: Clock) -> None:
    f = frontier(db, clock, Caps(per_domain=3))
    f.admit(rows(3, prio=1))
    f.admit(rows(1, start=10, prio=0))  # lower than all: refused
    f.admit(rows(1, start=20, prio=9))  # higher: evicts the newest lowest
    assert f.queued == 3
    assert f.overflowed == 2
    ds = f.pop_ready(clock.t)
    assert ds is not None
    assert [r.url for r in f.take(ds, 5)] == [
        "http://a.test/20",
        "http://a.test/0",
        "http://a.test/1",
    ]


def test_total_cap_sends_new_urls_to_overflow(db: FrontierDB, clock: Clock) -> None:
    f = frontier(db, clock, Caps(total=2))
    assert f.admit(rows(3)) == 2
    assert f.overflowed == 1


def test_lease_epochs_fence_old_leases() -> None:
    t = LeaseTable()
    first = t.grant("a.test", Holder("w1"), rows(2), now=0.0, ttl=10.0)
    assert t.current(first.id, first.epoch) is first
    t.remove(first, now=11.0)
    second = t.grant("a.test", Holder("w2"), rows(2), now=11.0, ttl=10.0)
    assert second.epoch == first.epoch + 1
    assert t.current(first.id, first.epoch) is None
    assert t.current(second.id, first.epoch) is None
    assert t.current(second.id, second.epoch) is second


def test_only_the_holder_renews_a_lease() -> None:
    t = LeaseTable()
    lease = t.grant("a.test", Holder("w1"), rows(1), now=0.0, ttl=10.0)
    t.renew("w2", [lease.id], now=5.0, ttl=10.0)
    assert lease.expires == 10.0
    t.renew("w1", [lease.id], now=5.0, ttl=10.0)
    assert lease.expires == 15.0
    assert t.expired(14.9) == []
    assert t.expired(15.0) == [lease]


def test_max_pages_per_domain_holds_across_calls_and_restarts(tmp_path: Path) -> None:
    from nadird.common.urls import fingerprint
    from nadird.job.spec import Job
    from nadird.master.frontier.admission import Admission
    from nadird.master.frontier.seen import SeenSet

    jobs = {"j": Job(name="j", max_pages_per_domain=3)}

    def admission() -> Admission:
        db = FrontierDB(tmp_path / "f.db")
        return Admission(SeenSet(1000, 0.001), Frontier(db), jobs)

    def urls(domain: str, start: int, n: int) -> list[str]:
        return [f"http://{domain}/{i}" for i in range(start, start + n)]

    first = admission()
    batch = urls("a.test", 0, 2) + urls("b.test", 0, 5)
    assert first.admit("j", batch, [fingerprint(u) for u in batch], 1) == 5  # 2 + 3
    more = urls("a.test", 2, 4)
    assert first.admit("j", more, [fingerprint(u) for u in more], 1) == 1
    first.frontier.db.close()
    again = admission()
    late = urls("a.test", 10, 2) + urls("c.test", 0, 1)
    assert again.admit("j", late, [fingerprint(u) for u in late], 1) == 1  # only c.test


def test_hub_pages_are_leased_before_the_pages_they_lead_to(tmp_path: Path) -> None:
    from nadird.common.urls import fingerprint
    from nadird.job.spec import Job
    from nadird.master.frontier.admission import Admission
    from nadird.master.frontier.seen import SeenSet

    jobs = {"j": Job(name="j"), "flat": Job(name="flat", hub_patterns=[])}
    admission = Admission(SeenSet(1000, 0.001), Frontier(FrontierDB(tmp_path / "f.db")), jobs)
    items = [f"http://a.test/item/{i}" for i in range(3)]
    hubs = [
        "http://a.test/category/shoes",
        "http://a.test/news/",
        "http://a.test/list?page=2",
    ]
    found = [items[0], hubs[0], items[1], hubs[1], items[2], hubs[2]]  # document order
    admission.admit("j", found, [fingerprint(u) for u in found], 2)
    # A hub found one level deeper still comes before the items (bonus 10 > 1).
    deeper = "http://a.test/tags/red"
    admission.admit("j", [deeper], [fingerprint(deeper)], 3)
    frontier = admission.frontier
    ds = frontier.pop_ready(0.0)
    assert ds is not None
    taken = [r.url for r in frontier.take(ds, 10)]
    assert taken == [*hubs, deeper, *items]
    # A job without hub patterns keeps plain breadth-first order.
    flat = [f"http://b.test/category/{i}" for i in range(2)] + ["http://b.test/x"]
    admission.admit("flat", flat, [fingerprint(u) for u in flat], 1)
    ds = frontier.pop_ready(0.0)
    assert ds is not None and ds.name == "b.test"
    assert [r.url for r in frontier.take(ds, 10)] == flat
