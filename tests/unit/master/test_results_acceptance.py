"""Which results the master accepts (MasterCore, no sockets): only from the
holder of a live or recently ended lease, for URLs that lease contained."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.core_helpers import A_URLS, T0, TTL, bags, make_core, page, register, results

from nadird.master.core import MasterCore
from nadird.master.leasing.leases import EndedLeases, Holder, Lease
from nadird.master.row import Row
from nadird.protocol.messages import BagDone, Results


@pytest.fixture
def core(tmp_path: Path) -> Iterator[MasterCore]:
    yield from make_core(tmp_path)


def refused(core: MasterCore) -> dict[str, int]:
    return dict(core.refused)


def test_the_holders_results_are_stored_and_settle_its_lease(core: MasterCore) -> None:
    session = register(core, "w1")
    bag = bags(core)["a.test"]
    records = core.on_results(results(bag, "w1", session, [page(u) for u in bag.urls]), T0)
    assert sorted(r.url for r in records) == sorted(A_URLS)
    core.on_control(b"w1", BagDone(node="w1", lease=bag.lease, epoch=bag.epoch), T0)
    assert core.leases.current(bag.lease, bag.epoch) is None  # closed: nothing pending
    assert core.stats["dropped_messages"] == 0 and core.stats["pages_ok"] == 3
    assert len(core.leases.ended) == 0  # a lease answered in full leaves no record


def test_a_peer_without_the_session_token_stores_nothing(core: MasterCore) -> None:
    session = register(core, "w1")
    bag = bags(core)["a.test"]
    forged = [page(u, title="forged") for u in bag.urls]
    for token in (b"", os.urandom(16), session[:-1] + bytes([session[-1] ^ 1])):
        assert core.on_results(results(bag, "w1", token, forged), T0) == []
    assert refused(core) == {"session": 3}
    assert core.stats["dropped_messages"] == 3
    # The lease is untouched: the real results still settle every URL.
    records = core.on_results(results(bag, "w1", session, [page(u) for u in bag.urls]), T0)
    assert {r.data["title"] for r in records} == {"real"} and len(records) == 3


def test_no_lease_of_this_master_means_no_store(core: MasterCore) -> None:
    session = register(core, "w1")
    bag = bags(core)["a.test"]
    queued = core.frontier.queued
    pages = [page(A_URLS[0])]
    for lease, epoch in (("abc-1", 1), (bag.lease, bag.epoch + 1)):  # made up; stale epoch
        msg = Results(node="w1", lease=lease, epoch=epoch, job="x", pages=pages, session=session)
        assert core.on_results(msg, T0) == []
    assert refused(core) == {"no_lease": 2}
    assert core.frontier.queued == queued and core.stats.get("late_results", 0) == 0


def test_another_workers_lease_is_refused_even_with_a_valid_token(core: MasterCore) -> None:
    w1 = register(core, "w1")
    handed = bags(core)
    w2 = register(core, "w2")
    bag = handed["a.test"]
    mine = [page(u, title="forged") for u in bag.urls]
    assert core.on_results(results(bag, "w2", w2, mine), T0) == []  # its own name
    assert core.on_results(results(bag, "w1", w2, mine), T0) == []  # the holder's name
    assert refused(core) == {"other_node": 1, "session": 1}
    assert len(core.on_results(results(bag, "w1", w1, [page(u) for u in bag.urls]), T0)) == 3


def test_a_page_outside_the_lease_drops_the_whole_message(core: MasterCore) -> None:
    session = register(core, "w1")
    handed = bags(core)
    bag, other = handed["a.test"], handed["b.test"]
    real = page(bag.urls[0])
    not_leased = page(other.urls[0])  # leased, but in another lease
    never_admitted = page("http://a.test/elsewhere")
    wrong_url = page("http://a.test/elsewhere", fp=bag.fps[1])  # a leased fp, another URL
    for intruder in (not_leased, never_admitted, wrong_url):
        assert core.on_results(results(bag, "w1", session, [real, intruder]), T0) == []
    assert refused(core) == {"not_leased": 3}
    lease = core.leases.current(bag.lease, bag.epoch)
    assert lease is not None and len(lease.pending) == 3  # nothing of it was applied


def test_under_curve_the_key_must_be_the_one_the_holder_registered_with(
    core: MasterCore,
) -> None:
    session = register(core, "w1", user="KEY-OF-W1")
    bag = bags(core)["a.test"]
    pages = [page(u) for u in bag.urls]
    assert core.on_results(results(bag, "w1", session, pages), T0, user="KEY-OF-W2") == []
    assert core.on_results(results(bag, "w1", session, pages), T0, user="") == []
    assert refused(core) == {"key": 2}
    assert len(core.on_results(results(bag, "w1", session, pages), T0, user="KEY-OF-W1")) == 3


def test_late_results_of_an_expired_lease_are_taken_from_its_holder_within_the_window(
    core: MasterCore,
) -> None:
    session = register(core, "w1")
    bag = bags(core)["a.test"]
    first = [page(bag.urls[0])]
    assert len(core.on_results(results(bag, "w1", session, first), T0)) == 1
    expired = T0 + TTL + 0.1
    core.expire(expired)
    assert core.leases.current(bag.lease, bag.epoch) is None
    # The answered URL is not in the record: only what was still out is.
    again = results(bag, "w1", session, first)
    assert core.on_results(again, expired) == []
    rest = [page(u) for u in bag.urls[1:]]
    assert core.on_results(results(bag, "w1", os.urandom(16), rest), expired) == []
    records = core.on_results(results(bag, "w1", session, rest), expired + TTL - 0.2)
    assert sorted(r.url for r in records) == sorted(bag.urls[1:])
    assert core.stats["late_results"] == 2
    assert refused(core) == {"not_leased": 1, "session": 1}
    # Past the window (lease_ttl by default) the record is gone.
    core.expire(expired + TTL + 0.1)
    assert len(core.leases.ended) == 0
    assert core.on_results(results(bag, "w1", session, rest), expired + TTL + 0.1) == []
    assert refused(core)["no_lease"] == 1


def test_a_restarted_worker_keeps_its_old_bags_results_but_not_under_its_new_token(
    core: MasterCore,
) -> None:
    old = register(core, "w1")
    bag = bags(core)["a.test"]
    new = register(core, "w1", now=T0 + 0.1, pid=2)  # same name, new process: leases taken back
    assert new != old and core.leases.current(bag.lease, bag.epoch) is None
    pages = [page(u) for u in bag.urls]
    assert core.on_results(results(bag, "w1", new, pages), T0 + 0.2) == []
    assert len(core.on_results(results(bag, "w1", old, pages), T0 + 0.2)) == 3
    assert refused(core) == {"session": 1}


def test_the_late_result_window_is_configurable(tmp_path: Path) -> None:
    for core in make_core(tmp_path, late_result_window=0.0):
        session = register(core, "w1")
        bag = bags(core)["a.test"]
        core.expire(T0 + TTL + 0.1)
        late = results(bag, "w1", session, [page(bag.urls[0])])
        assert core.on_results(late, T0 + TTL + 0.2) == []
        assert refused(core) == {"no_lease": 1} and len(core.leases.ended) == 0


def test_records_and_links_take_the_leases_job_not_the_messages(core: MasterCore) -> None:
    session = register(core, "w1")
    bag = bags(core)["a.test"]
    msg = Results(
        node="w1",
        lease=bag.lease,
        epoch=bag.epoch,
        job="someone-elses",
        pages=[page(bag.urls[0])],
        session=session,
    )
    [record] = core.on_results(msg, T0)
    assert record.job == "default"


def test_ended_lease_records_are_bounded_oldest_first() -> None:
    ended = EndedLeases(max_urls=5)
    holder = Holder("w1", b"s" * 16)
    for i in range(4):
        rows = [
            Row(f"http://x.test/{i}/{j}", bytes([i, j]) * 8, 0, "default", 0, "x.test")
            for j in range(2)
        ]
        lease = Lease(f"L{i}", 1, "x.test", "default", holder, 0.0, 0.0, {r.fp: r for r in rows})
        ended.add(lease, float(i))
    assert len(ended) == 2  # 8 URLs over the cap of 5: the two oldest went
    assert ended.get("L0", 1, 3.0, 10.0) is None
    assert ended.get("L3", 1, 3.0, 10.0) is not None
    assert ended.get("L3", 2, 3.0, 10.0) is None  # another epoch
    ended.trim(now=12.5, window=10.0)
    assert len(ended) == 1 and ended.get("L3", 1, 12.5, 10.0) is not None
