from nadird.master.frontier import Entry, Frontier
from nadird.master.leases import LeaseTable


def entries(n: int, job: str = "j", start: int = 0) -> list[Entry]:
    return [
        Entry(f"http://a.test/{i}", i.to_bytes(16, "big"), 0, job) for i in range(start, start + n)
    ]


def test_ready_domains_come_out_by_next_allowed_time() -> None:
    f = Frontier()
    f.push("a.test", entries(1))
    f.push("b.test", entries(1, start=10))
    f.release("a.test", next_allowed=5.0)  # a must rest until t=5
    assert f.pop_ready(1.0).name == "b.test"  # type: ignore[union-attr]
    assert f.pop_ready(1.0) is None
    assert f.next_ready_at() == 5.0
    assert f.pop_ready(5.0).name == "a.test"  # type: ignore[union-attr]


def test_leased_domain_is_never_ready_until_released() -> None:
    f = Frontier()
    f.push("a.test", entries(5))
    dq = f.pop_ready(0.0)
    assert dq is not None
    bag = f.take(dq, 2)
    assert [e.url for e in bag] == ["http://a.test/0", "http://a.test/1"]
    f.push("a.test", entries(1, start=99))  # new URLs while leased
    assert f.pop_ready(100.0) is None
    f.release("a.test", next_allowed=1.0, returned=bag[1:])
    dq = f.pop_ready(1.0)
    assert dq is not None
    # Returned URLs go first, before the ones that were still queued.
    assert [e.url for e in f.take(dq, 10)][:2] == ["http://a.test/1", "http://a.test/2"]


def test_bag_holds_one_job_only() -> None:
    f = Frontier()
    f.push("a.test", entries(2, job="x") + entries(2, job="y", start=5))
    dq = f.pop_ready(0.0)
    assert dq is not None
    assert {e.job for e in f.take(dq, 10)} == {"x"}
    assert f.queued == 2


def test_queued_counts_every_move() -> None:
    f = Frontier()
    f.push("a.test", entries(3))
    dq = f.pop_ready(0.0)
    assert dq is not None
    bag = f.take(dq, 3)
    assert f.queued == 0
    f.release("a.test", 0.0, bag)
    assert f.queued == 3


def test_lease_epochs_fence_old_leases() -> None:
    t = LeaseTable()
    first = t.grant("a.test", "w1", entries(2), now=0.0, ttl=10.0)
    assert t.current(first.id, first.epoch) is first
    t.remove(first)
    second = t.grant("a.test", "w2", entries(2), now=11.0, ttl=10.0)
    assert second.epoch == first.epoch + 1
    assert t.current(first.id, first.epoch) is None
    assert t.current(second.id, first.epoch) is None
    assert t.current(second.id, second.epoch) is second


def test_only_the_holder_renews_a_lease() -> None:
    t = LeaseTable()
    lease = t.grant("a.test", "w1", entries(1), now=0.0, ttl=10.0)
    t.renew("w2", [lease.id], now=5.0, ttl=10.0)
    assert lease.expires == 10.0
    t.renew("w1", [lease.id], now=5.0, ttl=10.0)
    assert lease.expires == 15.0
    assert t.expired(14.9) == []
    assert t.expired(15.0) == [lease]
